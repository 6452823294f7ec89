"""Pytrees: nested tuples, lists and dicts of arrays, as JAX has them.

`flatten(tree)` returns the leaves in a fixed order and a `TreeDef` that
`unflatten(leaves)` turns back into the same structure. Tuples (including
named tuples), lists and dicts (in sorted key order) are containers; None is
an empty container; everything else is a leaf.
"""


class TreeDef:
    """The structure of a pytree without its leaves; hashable, so it can key
    a cache."""

    __slots__ = ("kind", "meta", "children", "num_leaves")

    def __init__(self, kind, meta, children):
        self.kind = kind          # "leaf", "none", "tuple", "list", "dict", "namedtuple"
        self.meta = meta          # dict keys, or the namedtuple class
        self.children = children  # tuple of TreeDefs
        self.num_leaves = (1 if kind == "leaf" else
                           sum(c.num_leaves for c in children))

    def _key(self):
        return (self.kind, self.meta, self.children)

    def __eq__(self, other):
        return isinstance(other, TreeDef) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in
                              zip(self.meta, self.children))
            return "{" + inner + "}"
        if self.kind == "list":
            return "[" + inner + "]"
        return "(" + inner + ("," if len(self.children) == 1 else "") + ")"

    def unflatten(self, leaves):
        """The tree of this structure with `leaves` (in flatten's order)."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"the tree {self!r} has {self.num_leaves} "
                             f"leaves but {len(leaves)} were given")
        iterator = iter(leaves)
        return self._build(iterator)

    def _build(self, iterator):
        if self.kind == "leaf":
            return next(iterator)
        if self.kind == "none":
            return None
        parts = [c._build(iterator) for c in self.children]
        if self.kind == "tuple":
            return tuple(parts)
        if self.kind == "list":
            return parts
        if self.kind == "namedtuple":
            return self.meta(*parts)
        return dict(zip(self.meta, parts))


LEAF = TreeDef("leaf", None, ())


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def flatten(tree):
    """(leaves, treedef) of `tree`."""
    leaves = []

    def walk(node):
        if node is None:
            return TreeDef("none", None, ())
        if isinstance(node, (list, tuple)):
            children = tuple(walk(c) for c in node)
            if isinstance(node, list):
                return TreeDef("list", None, children)
            if _is_namedtuple(node):
                return TreeDef("namedtuple", type(node), children)
            return TreeDef("tuple", None, children)
        if isinstance(node, dict):
            try:
                keys = tuple(sorted(node))
            except TypeError:
                raise TypeError("kiln: the keys of a dict in a pytree must be "
                                "sortable") from None
            return TreeDef("dict", keys, tuple(walk(node[k]) for k in keys))
        leaves.append(node)
        return LEAF

    treedef = walk(tree)
    return leaves, treedef


def leaves(tree):
    """The leaves of `tree`, in flatten's order."""
    return flatten(tree)[0]


def tree_map(fn, tree, *rest):
    """`tree` with `fn(leaf, *matching leaves of rest)` at every leaf."""
    flat, treedef = flatten(tree)
    others = []
    for other in rest:
        other_flat, other_def = flatten(other)
        if other_def != treedef:
            raise ValueError(f"tree_map: the trees {treedef!r} and "
                             f"{other_def!r} differ in structure")
        others.append(other_flat)
    return treedef.unflatten(fn(*xs) for xs in zip(flat, *others))

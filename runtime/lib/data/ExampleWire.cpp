//===- ExampleWire.cpp - tf.Example's wire format, decoded in place -------===//
//
// A message is a sequence of fields, each a tag (field number << 3 | wire
// type, a varint) and a payload: a varint (0), 8 bytes (1), a length and
// that many bytes (2), a group up to its matching end tag (3, 4), 4 bytes
// (5). Fields the messages do not declare, or declared ones with another
// wire type, are unknown fields: checked and skipped, as protobuf keeps
// them aside. The field numbers are example.proto's.
//
//===----------------------------------------------------------------------===//

#include "ExampleWire.h"

#include <algorithm>
#include <cstring>

namespace kiln {
namespace data {
namespace wire {
namespace {

enum WireType : uint32_t {
  Varint = 0,
  Fixed64 = 1,
  LengthDelimited = 2,
  StartGroup = 3,
  EndGroup = 4,
  Fixed32 = 5,
};

/// protobuf's default recursion limit: the messages and groups nested
/// below the record.
constexpr int kRecursionLimit = 100;

/// A read position in a message's bytes and the depth left.
struct Cursor {
  const unsigned char *at, *end;
  int depth;

  Cursor(std::string_view bytes, int depth)
      : at(reinterpret_cast<const unsigned char *>(bytes.data())),
        end(at + bytes.size()), depth(depth) {}
  bool done() const { return at == end; }

  /// A varint of up to ten bytes (high bits past 64 are dropped, as
  /// protobuf drops them).
  bool varint(uint64_t &value) {
    value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (at == end)
        return false;
      unsigned char byte = *at++;
      if (shift < 64)
        value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }

  /// A tag: a varint of at most five bytes whose low 32 bits (protobuf
  /// drops the rest) hold a field number above 0 and a wire type that
  /// exists.
  bool tag(uint32_t &field, uint32_t &wireType) {
    const unsigned char *start = at;
    uint64_t value;
    if (!varint(value) || at - start > 5)
      return false;
    value &= 0xffffffffu;
    field = static_cast<uint32_t>(value >> 3);
    wireType = static_cast<uint32_t>(value & 7);
    return field != 0 && wireType <= Fixed32;
  }

  /// A length (a varint of at most five bytes, below 2^31, as protobuf
  /// reads sizes) and that many bytes.
  bool lengthDelimited(std::string_view &bytes) {
    const unsigned char *start = at;
    uint64_t length;
    if (!varint(length) || at - start > 5 || length > 0x7fffffffu ||
        length > static_cast<uint64_t>(end - at))
      return false;
    bytes = std::string_view(reinterpret_cast<const char *>(at), length);
    at += length;
    return true;
  }

  bool fixed(size_t size) {
    if (static_cast<size_t>(end - at) < size)
      return false;
    at += size;
    return true;
  }

  /// Skips an unknown field's payload; a group up to its end tag, which
  /// must name the same field.
  bool skip(uint32_t field, uint32_t wireType) {
    std::string_view unused;
    switch (wireType) {
    case Varint: {
      uint64_t value;
      return varint(value);
    }
    case Fixed64:
      return fixed(8);
    case LengthDelimited:
      return lengthDelimited(unused);
    case Fixed32:
      return fixed(4);
    case StartGroup: {
      if (--depth < 0)
        return false;
      uint32_t inner, innerType;
      while (true) {
        if (!tag(inner, innerType))
          return false;
        if (innerType == EndGroup) {
          ++depth;
          return inner == field;
        }
        if (!skip(inner, innerType))
          return false;
      }
    }
    default:
      return false; // an end tag that no group opened
    }
  }
};

/// Calls `onField(field, wireType, cursor)` for each field of a message;
/// it reads the payload of the fields it takes and returns false on a
/// malformed one, or returns an empty optional to have the field skipped.
template <typename OnField>
bool forEachField(Cursor &cursor, OnField onField) {
  while (!cursor.done()) {
    uint32_t field, wireType;
    if (!cursor.tag(field, wireType))
      return false;
    std::optional<bool> taken = onField(field, wireType, cursor);
    if (taken) {
      if (!*taken)
        return false;
    } else if (!cursor.skip(field, wireType)) {
      return false;
    }
  }
  return true;
}

/// A length-delimited submessage's bytes, one level deeper.
bool submessage(Cursor &cursor, std::string_view &bytes) {
  return cursor.depth > 0 && cursor.lengthDelimited(bytes);
}

/// Strict UTF-8, as protobuf checks proto3 strings: no overlong forms, no
/// surrogates, nothing past U+10FFFF.
bool isUtf8(std::string_view text) {
  const auto *at = reinterpret_cast<const unsigned char *>(text.data());
  const auto *end = at + text.size();
  while (at < end) {
    unsigned char lead = *at;
    if (lead < 0x80) {
      ++at;
      continue;
    }
    int extra;
    uint32_t low;
    if (lead >= 0xc2 && lead <= 0xdf) {
      extra = 1;
      low = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      extra = 2;
      low = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      extra = 3;
      low = 0x10000;
    } else {
      return false;
    }
    if (end - at <= extra)
      return false;
    uint32_t code = lead & (0x3f >> extra);
    for (int i = 1; i <= extra; ++i) {
      if ((at[i] & 0xc0) != 0x80)
        return false;
      code = code << 6 | (at[i] & 0x3f);
    }
    if (code < low || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
      return false;
    at += extra + 1;
  }
  return true;
}

/// Reads a list message of `type` (its values in field 1, packed or one
/// per field; other fields skipped) and hands them to `take`: a string's
/// bytes to take.bytes, 4 * k bytes of floats to take.floats, an integer
/// to take.integer. False where the list is malformed.
template <typename Take>
bool readList(std::string_view body, FeatureType type, int depth,
              Take &&take) {
  Cursor cursor(body, depth);
  return forEachField(cursor, [&](uint32_t field, uint32_t wireType,
                                  Cursor &c) -> std::optional<bool> {
    if (field != 1)
      return std::nullopt;
    std::string_view bytes;
    switch (type) {
    case FeatureType::Bytes:
      if (wireType != LengthDelimited)
        return std::nullopt;
      if (!c.lengthDelimited(bytes))
        return false;
      take.bytes(bytes);
      return true;
    case FeatureType::Float:
      if (wireType == Fixed32) {
        bytes = std::string_view(reinterpret_cast<const char *>(c.at),
                                 std::min<size_t>(4, c.end - c.at));
        if (!c.fixed(4))
          return false;
      } else if (wireType != LengthDelimited) {
        return std::nullopt;
      } else if (!c.lengthDelimited(bytes) || bytes.size() % 4) {
        return false;
      }
      take.floats(bytes);
      return true;
    case FeatureType::Int64: {
      uint64_t value;
      if (wireType == Varint) {
        if (!c.varint(value))
          return false;
        take.integer(value);
        return true;
      }
      if (wireType != LengthDelimited)
        return std::nullopt;
      if (!c.lengthDelimited(bytes))
        return false;
      for (Cursor packed(bytes, c.depth); !packed.done();) {
        if (!packed.varint(value))
          return false;
        take.integer(value);
      }
      return true;
    }
    }
    return false;
  });
}

/// Counts a list's values as readList reads them.
struct CountValues {
  int64_t &count;
  void bytes(std::string_view) { ++count; }
  void floats(std::string_view packed) { count += packed.size() / 4; }
  void integer(uint64_t) { ++count; }
};

/// Appends a list's values to a batch's arrays.
struct AppendValues {
  FeatureValues &out;
  void bytes(std::string_view value) { out.bytes.emplace_back(value); }
  void floats(std::string_view packed) {
    for (size_t i = 0; i < packed.size(); i += 4) {
      float value;
      std::memcpy(&value, packed.data() + i, 4);
      out.floats.push_back(value);
    }
  }
  void integer(uint64_t value) {
    out.ints.push_back(static_cast<int64_t>(value));
  }
};

/// Merges a Feature message into `feature`: its oneof member switches
/// to the last one present, whose lists accumulate.
bool decodeFeature(std::string_view body, int depth, FeatureView &feature) {
  Cursor cursor(body, depth);
  return forEachField(cursor, [&](uint32_t field, uint32_t wireType,
                                  Cursor &c) -> std::optional<bool> {
    if (field < 1 || field > 3 || wireType != LengthDelimited)
      return std::nullopt;
    FeatureType type = field == 1   ? FeatureType::Bytes
                       : field == 2 ? FeatureType::Float
                                    : FeatureType::Int64;
    std::string_view list;
    if (!submessage(c, list))
      return false;
    if (feature.type != type) {
      feature.type = type;
      feature.clearLists();
    }
    feature.addList(list);
    return readList(list, type, c.depth - 1, CountValues{feature.count});
  });
}

/// Decodes one map entry (key = 1, a string; value = 2, a message) whose
/// value `decodeValue(bytes, depth)` merges into the entry's value.
template <typename DecodeValue>
bool decodeMapEntry(std::string_view body, int depth, std::string_view &key,
                    DecodeValue decodeValue) {
  Cursor cursor(body, depth);
  key = std::string_view();
  return forEachField(cursor, [&](uint32_t field, uint32_t wireType,
                                     Cursor &c) -> std::optional<bool> {
    if (wireType != LengthDelimited || (field != 1 && field != 2))
      return std::nullopt;
    // Every key read is checked, also one that a later key replaces.
    if (field == 1)
      return c.lengthDelimited(key) && isUtf8(key);
    std::string_view value;
    return submessage(c, value) && decodeValue(value, c.depth - 1);
  });
}

/// Appends the entries of a map message (entries in field 1) to `out`:
/// each a `Named` with its key as the name and its value merged by
/// `decodeValue(named, value bytes, depth)`.
template <typename Named, typename DecodeValue>
bool decodeMap(std::string_view body, int depth, std::vector<Named> &out,
               DecodeValue decodeValue) {
  Cursor cursor(body, depth);
  return forEachField(cursor, [&](uint32_t field, uint32_t wireType,
                                  Cursor &c) -> std::optional<bool> {
    if (field != 1 || wireType != LengthDelimited)
      return std::nullopt;
    std::string_view entry;
    if (!submessage(c, entry))
      return false;
    Named named;
    if (!decodeMapEntry(entry, c.depth - 1, named.name,
                        [&](std::string_view value, int d) {
                          return decodeValue(named, value, d);
                        }))
      return false;
    out.push_back(std::move(named));
    return true;
  });
}

/// Appends a Features message's entries.
bool decodeFeatures(std::string_view body, int depth,
                    std::vector<NamedFeature> &features) {
  return decodeMap(body, depth, features,
                   [](NamedFeature &named, std::string_view value, int d) {
                     return decodeFeature(value, d, named.feature);
                   });
}

/// Appends a FeatureLists message's entries; a FeatureList is repeated
/// Feature feature = 1, one per step.
bool decodeFeatureLists(std::string_view body, int depth,
                        std::vector<NamedFeatureList> &lists) {
  return decodeMap(
      body, depth, lists,
      [](NamedFeatureList &named, std::string_view value, int d) {
        Cursor list(value, d);
        return forEachField(list, [&](uint32_t f, uint32_t w,
                                      Cursor &c) -> std::optional<bool> {
          if (f != 1 || w != LengthDelimited)
            return std::nullopt;
          std::string_view step;
          named.steps.emplace_back();
          return submessage(c, step) &&
                 decodeFeature(step, c.depth - 1, named.steps.back());
        });
      });
}

} // namespace

bool decodeExample(std::string_view record,
                   std::vector<NamedFeature> &features) {
  features.clear();
  Cursor cursor(record, kRecursionLimit);
  return forEachField(cursor, [&](uint32_t field, uint32_t wireType,
                                  Cursor &c) -> std::optional<bool> {
    if (field != 1 || wireType != LengthDelimited)
      return std::nullopt;
    std::string_view body;
    return submessage(c, body) && decodeFeatures(body, c.depth - 1, features);
  });
}

bool decodeSequenceExample(std::string_view record,
                           std::vector<NamedFeature> &context,
                           std::vector<NamedFeatureList> &featureLists) {
  context.clear();
  featureLists.clear();
  Cursor cursor(record, kRecursionLimit);
  return forEachField(cursor, [&](uint32_t field, uint32_t wireType,
                                  Cursor &c) -> std::optional<bool> {
    if ((field != 1 && field != 2) || wireType != LengthDelimited)
      return std::nullopt;
    std::string_view body;
    if (!submessage(c, body))
      return false;
    return field == 1 ? decodeFeatures(body, c.depth - 1, context)
                      : decodeFeatureLists(body, c.depth - 1, featureLists);
  });
}

void appendValues(const FeatureView &feature, FeatureValues &out) {
  if (!feature.type)
    return;
  // The lists were checked when decoded: every read succeeds.
  feature.forEachList([&](std::string_view list) {
    readList(list, *feature.type, kRecursionLimit, AppendValues{out});
  });
}

} // namespace wire
} // namespace data
} // namespace kiln

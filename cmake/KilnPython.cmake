# Python bindings: the interpreter, pybind11, and a helper that lays out a
# package in build/python/ (PYTHONPATH=build/python makes it importable).
#
# The bindings use Debian's /usr/bin/python3 (with python3-numpy) unless
# -DPython3_EXECUTABLE=... names another; an extension module only loads in
# the interpreter version it was built for.
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH
      "The Python interpreter kiln's bindings and tests use")
endif()
option(KILN_PYTHON "Build the Python bindings (needs pybind11-dev, python3-dev)" ON)
if(KILN_PYTHON)
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
  find_package(pybind11 CONFIG)
  if(NOT pybind11_FOUND)
    message(FATAL_ERROR "kiln's Python bindings need pybind11 (Debian: "
            "pybind11-dev, installed by tools/setup.sh); or configure with "
            "-DKILN_PYTHON=OFF")
  endif()
  # kiln_runtime exchanges device arrays with other libraries through
  # DLPack (header only).
  find_path(KILN_DLPACK_INCLUDE_DIR dlpack/dlpack.h)
  if(NOT KILN_DLPACK_INCLUDE_DIR)
    message(FATAL_ERROR "kiln's Python bindings need DLPack's header "
            "(Debian: libdlpack-dev, installed by tools/setup.sh); or "
            "configure with -DKILN_PYTHON=OFF")
  endif()
endif()
set(KILN_PYTHON_DIR ${CMAKE_BINARY_DIR}/python)

# Interpreters with jax or torch, for the tests that compare with them
# (test/python, examples/training/compare_torch.py).
set(KILN_JAX_PYTHON "" CACHE FILEPATH
    "A Python with jax (same version as Python3_EXECUTABLE) for the JAX reference tests")
set(KILN_TORCH_PYTHON "" CACHE FILEPATH
    "A Python with torch (same version as Python3_EXECUTABLE) for the torch reference tests")

# The benchmark virtualenv (bench/setup-anchors.sh), whose python serves as
# both references where the two above are not given. No default location:
# the environment variable of the same name, or nothing.
set(KILN_BENCH_VENV "$ENV{KILN_BENCH_VENV}" CACHE PATH
    "The benchmark virtualenv (bench/setup-anchors.sh), for the reference tests")

# kiln_reference_python(<out> <module> <configured>): <configured>, or else
# the benchmark virtualenv's python, if it imports <module> and is of the
# same Python version as the bindings; "" otherwise.
function(kiln_reference_python out module configured)
  set(python "${configured}")
  if(NOT python AND KILN_BENCH_VENV AND EXISTS ${KILN_BENCH_VENV}/bin/python)
    set(python ${KILN_BENCH_VENV}/bin/python)
  endif()
  if(python)
    execute_process(
      COMMAND ${python} -c
        "import sys, ${module}; print('%d.%d' % sys.version_info[:2])"
      OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE result ERROR_QUIET)
    if(NOT result EQUAL 0 OR NOT version STREQUAL
       "${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}")
      set(python "")
    endif()
  endif()
  set(${out} "${python}" PARENT_SCOPE)
endfunction()

# --- Wheels (pyproject.toml, runtime/pyproject.toml) ------------------------
# scikit-build-core builds the target kiln-wheel or kiln-runtime-wheel and
# installs the component of the same name into the wheel's root:
#   kiln-runtime-wheel   kiln_runtime/ (its Python files, _runtime.so, and
#                        in kiln_runtime/_libs/ the runtime library both
#                        extensions link, libkiln_runtime.so, with the
#                        runtime's plug-ins)
#   kiln-wheel           kiln/ (its Python files, _kiln.so, and the
#                        compiler's support archives in kiln/_libs/), and
#                        kiln_runtime/ as above: the compiler's package
#                        imports the runtime's, so it ships it.
# The components are left out of a plain `cmake --install`, whose layout
# (bin/, lib/, include/) is another.
add_custom_target(kiln-wheel)
add_custom_target(kiln-runtime-wheel)

# kiln_wheel_components(<out> <package>): the wheel components that carry
# the Python package <package> (kiln or kiln_runtime).
function(kiln_wheel_components out package)
  if(package STREQUAL "kiln_runtime")
    set(${out} kiln-runtime-wheel kiln-wheel PARENT_SCOPE)
  else()
    set(${out} kiln-wheel PARENT_SCOPE)
  endif()
endfunction()

# kiln_wheel_native(<package> <target>...): installs the shared libraries
# or archives <target> into <package>/_libs/ of the wheels that carry
# <package>, where the code in the package's extension looks for them
# (Plugins.cpp, SharedObjectLinker.cpp), and builds them with those wheels.
function(kiln_wheel_native package)
  kiln_wheel_components(components ${package})
  foreach(component ${components})
    # (Each kind of artifact takes its own component.)
    install(TARGETS ${ARGN}
      LIBRARY DESTINATION ${package}/_libs
        COMPONENT ${component} EXCLUDE_FROM_ALL
      ARCHIVE DESTINATION ${package}/_libs
        COMPONENT ${component} EXCLUDE_FROM_ALL)
    add_dependencies(${component} ${ARGN})
  endforeach()
endfunction()

# kiln_python_package(<target> <source dir> <package name>): copies the .py
# files under <source dir>/<package name> into build/python/<package name>
# whenever they change, as part of <target> (a custom target made here), and
# installs them into the wheels that carry the package.
function(kiln_python_package target source_dir package)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS
       RELATIVE ${source_dir} ${source_dir}/${package}/*.py)
  set(outputs)
  foreach(source ${sources})
    set(output ${KILN_PYTHON_DIR}/${source})
    add_custom_command(OUTPUT ${output}
      COMMAND ${CMAKE_COMMAND} -E copy_if_different ${source_dir}/${source}
              ${output}
      DEPENDS ${source_dir}/${source}
      VERBATIM)
    list(APPEND outputs ${output})
  endforeach()
  add_custom_target(${target} ALL DEPENDS ${outputs})
  kiln_wheel_components(components ${package})
  foreach(component ${components})
    install(DIRECTORY ${source_dir}/${package} DESTINATION .
      COMPONENT ${component} EXCLUDE_FROM_ALL
      FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
    add_dependencies(${component} ${target})
  endforeach()
endfunction()

# kiln_python_extension(<name> <package> <sources...>): a pybind11 module
# <package>.<name> built into build/python/<package>/, and installed into
# the wheels that carry <package>.
function(kiln_python_extension name package)
  # NO_EXTRAS: no link-time optimization (a long link for nothing: the
  # libraries it links are not LTO objects) and no stripping.
  pybind11_add_module(${name} MODULE NO_EXTRAS ${ARGN})
  set_target_properties(${name} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${KILN_PYTHON_DIR}/${package}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  kiln_wheel_components(components ${package})
  foreach(component ${components})
    install(TARGETS ${name} LIBRARY DESTINATION ${package}
      COMPONENT ${component} EXCLUDE_FROM_ALL)
    add_dependencies(${component} ${name})
  endforeach()
endfunction()

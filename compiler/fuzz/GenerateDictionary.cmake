# Writes kiln-fuzz-compile-mlir's libFuzzer dictionary: the MLIR syntax in
# mlir.dict, then what the kiln dialect's ODS files and parsers name - each
# op as "kiln.<mnemonic>", the enum cases, the literals of the assembly
# formats and the keywords the custom parsers expect - so that ops added to
# the dialect join the dictionary at the next build.
#
#   cmake -DBASE=mlir.dict -DSOURCES="a.td;b.cpp;..." -DOUTPUT=... -P ...

foreach(variable BASE SOURCES OUTPUT)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "GenerateDictionary.cmake: ${variable} is not set")
  endif()
endforeach()

set(words)
foreach(source ${SOURCES})
  file(READ ${source} text)
  # def Kiln_AddOp : Kiln_BinaryOp<"add", ...>
  string(REGEX MATCHALL "def Kiln_[A-Za-z0-9]+Op *: *Kiln_[A-Za-z]*Op<\"[a-z_0-9]+\""
         ops "${text}")
  foreach(op ${ops})
    string(REGEX REPLACE ".*<\"([a-z_0-9]+)\"" "kiln.\\1" op "${op}")
    list(APPEND words ${op})
  endforeach()
  # I32EnumAttrCase<"Sum", 0, "sum">: the last string is the spelling.
  string(REGEX MATCHALL "I32EnumAttrCase<\"[A-Za-z_0-9]+\", *[0-9]+(, *\"[a-z_0-9]+\")?>"
         cases "${text}")
  foreach(case ${cases})
    string(REGEX REPLACE ".*\"([A-Za-z_0-9]+)\">$" "\\1" case "${case}")
    list(APPEND words ${case})
  endforeach()
  # Literals of assembly formats, `dim` (doc text's code spans come along).
  string(REGEX MATCHALL "`[a-z_]+`" literals "${text}")
  foreach(literal ${literals})
    string(REGEX REPLACE "`" "" literal "${literal}")
    list(APPEND words ${literal})
  endforeach()
  # parser.parseKeyword("groups") in custom parsers.
  string(REGEX MATCHALL "parse(Optional)?Keyword\\(\"[a-z_]+\"" keywords
         "${text}")
  foreach(keyword ${keywords})
    string(REGEX REPLACE ".*\"([a-z_]+)\"" "\\1" keyword "${keyword}")
    list(APPEND words ${keyword})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES words)
list(SORT words)
list(LENGTH words count)
if(count LESS 50)
  message(FATAL_ERROR "GenerateDictionary.cmake: only ${count} words found "
                      "in ${SOURCES}; has the ODS syntax changed?")
endif()

file(READ ${BASE} dictionary)
string(APPEND dictionary "\n# From the kiln dialect (${count} words).\n")
foreach(word ${words})
  string(APPEND dictionary "\"${word}\"\n")
endforeach()
file(WRITE ${OUTPUT}.tmp "${dictionary}")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)

# Lists the kernel headers that host code includes ("device/kernels/NAME"), as
# a C array, so that a kernel tree (BITGATE_KERNEL_TREE, device/kernel_tree.h)
# may not change what the host was compiled with.  Inputs: SOURCES (list),
# OUT (generated .c).  OUT is rewritten only when its text changes, so that
# an edit elsewhere in a host file does not rebuild the table's users.
set(names "")
foreach(f IN LISTS SOURCES)
  file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"device/kernels/[^\"]+\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE ".*\"device/kernels/([^\"]+)\".*" "\\1" name "${line}")
    list(APPEND names ${name})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES names)
list(SORT names)
set(body "#include \"device/kernel_sources.h\"\n\nconst char *const kernel_host_includes[] = {\n")
foreach(name IN LISTS names)
  string(APPEND body "  \"${name}\",\n")
endforeach()
list(LENGTH names n)
string(APPEND body "  0};\nconst int kernel_host_include_count = ${n};\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)

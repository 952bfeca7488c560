# Embeds kernel sources and the numerics headers into a C table, so that the
# binary compiles with NVRTC exactly the text it was built from.
# Inputs: FILES (list), ROOT (source dir), OUT (generated .c).
set(body "#include \"device/kernel_sources.h\"\n\n")
set(entries "")
set(i 0)
foreach(f IN LISTS FILES)
  file(READ ${f} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  file(RELATIVE_PATH rel ${ROOT} ${f})
  get_filename_component(name ${f} NAME)
  string(APPEND body "static const char src_${i}[] = {${hex}0};\n")
  string(APPEND entries "  {\"${name}\", \"${rel}\", src_${i}, sizeof src_${i} - 1},\n")
  math(EXPR i "${i} + 1")
endforeach()
string(APPEND body "\nconst struct kernel_source kernel_sources_embedded[] = {\n${entries}};\n")
string(APPEND body "const int kernel_sources_embedded_count = ${i};\n")
file(WRITE ${OUT} "${body}")

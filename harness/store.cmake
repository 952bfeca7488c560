# store.cmake: the SQLite results store (harness/store.h), included by the
# harness CMakeLists.  Users link PkgConfig::SQLITE3, ZLIB::ZLIB and Threads
# (golden payloads are compressed on parallel.c's workers).
set(BITGATE_STORE_SOURCES
  ${CMAKE_SOURCE_DIR}/harness/store.c
  ${CMAKE_SOURCE_DIR}/harness/store_rows.c
  ${CMAKE_SOURCE_DIR}/harness/store_schema.c
  ${CMAKE_SOURCE_DIR}/harness/store_golden.c
  ${CMAKE_SOURCE_DIR}/harness/store_bench.c
  ${CMAKE_SOURCE_DIR}/harness/parallel.c)

if(BITGATE_TESTS)
  bitgate_test(test_store
    SOURCES ${CMAKE_SOURCE_DIR}/harness/tests/test_store.c ${BITGATE_STORE_SOURCES}
    LABELS unit
    LIBS PkgConfig::SQLITE3 ZLIB::ZLIB Threads::Threads)
  # store_bench_put (schema 4) and `db merge` carrying bench rows.
  bitgate_test(test_bench_store
    SOURCES ${CMAKE_SOURCE_DIR}/harness/tests/test_bench_store.c ${BITGATE_STORE_SOURCES}
            ${CMAKE_SOURCE_DIR}/harness/store_merge.c
    LABELS unit
    LIBS PkgConfig::SQLITE3 ZLIB::ZLIB Threads::Threads m)
endif()

/* Private: the index of the embedded descriptor set, generated at build time by
 * proto/tools/index.c, so a one-shot process can load only the files it uses. */
#ifndef PO_SCHEMA_INDEX_H_
#define PO_SCHEMA_INDEX_H_

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t offset, size;        /* the FileDescriptorProto's bytes in the embedded set */
  uint32_t deps, dep_count;     /* its imports: po_envoy_file_deps[deps .. deps + dep_count) */
} po_SchemaFileIndex;

typedef struct {
  const char *name;             /* full name of a message, enum or extension */
  uint32_t file;                /* the file that defines it */
} po_SchemaSymbolIndex;

/* Files in the set's order (imports first); symbols sorted by strcmp of their names. */
extern const po_SchemaFileIndex po_envoy_files[];
extern const uint32_t po_envoy_file_deps[];
extern const po_SchemaSymbolIndex po_envoy_symbols[];
extern const size_t po_envoy_file_count, po_envoy_symbol_count;

#endif

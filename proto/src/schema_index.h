/* Private: the embedded descriptor sets (one per Envoy API snapshot) and their indexes, generated
 * at build time by proto/tools/index.c, so a one-shot process can load only the files it uses. */
#ifndef PO_SCHEMA_INDEX_H_
#define PO_SCHEMA_INDEX_H_

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t offset, size;        /* the FileDescriptorProto's bytes in po_envoy_pieces */
  uint32_t deps, dep_count;     /* its imports: the snapshot's deps[deps .. deps + dep_count) */
} po_SchemaFileIndex;

typedef struct {
  uint32_t name;                /* full name of a message, enum or extension: its offset in
                                 * po_envoy_symbol_names (offsets, not pointers, so the tables
                                 * need no relocation when the program starts) */
  uint32_t file;                /* the file that defines it */
} po_SchemaSymbolIndex;

/* One embedded snapshot: its files in its set's order (imports first), their imports, and its
 * symbols sorted by strcmp of their names. File offsets are into po_envoy_pieces, shared by every
 * snapshot: a piece identical in two snapshots is stored once. */
typedef struct {
  const char *version;                  /* "v1.32.4" */
  const po_SchemaFileIndex *files;
  size_t file_count;
  const uint32_t *deps;                 /* indexes into this snapshot's files */
  const po_SchemaSymbolIndex *symbols;
  size_t symbol_count;
  size_t set_size;                      /* of its FileDescriptorSet, reassembled from the pieces */
} po_SchemaSnapshotIndex;

/* At most this many snapshots: schema.c keeps one static slot per snapshot. */
enum { kPo_SchemaMaxSnapshots = 8 };

/* Oldest first, as proto/snapshots.tsv lists them. */
extern const po_SchemaSnapshotIndex po_envoy_snapshots[];
extern const size_t po_envoy_snapshot_count, po_envoy_snapshot_default;
/* Every distinct FileDescriptorProto (piece) of every snapshot, each stored once. */
extern const unsigned char po_envoy_pieces[];
extern const size_t po_envoy_pieces_size;
/* Every distinct symbol name, NUL-terminated, each stored once. */
extern const unsigned char po_envoy_symbol_names[];
extern const size_t po_envoy_symbol_names_size;

#endif

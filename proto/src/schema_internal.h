/* Private: the po_Schema layout, shared by the files of proto/src. */
#ifndef PO_SCHEMA_INTERNAL_H_
#define PO_SCHEMA_INTERNAL_H_

#include <stdlib.h>

#include "po/schema.h"

struct po_Schema {
  upb_DefPool *pool;
  size_t file_count;
  const upb_MessageDef *resources[4];    /* in the order of kResources */
  const upb_MessageDef *field_options;   /* the pool's google.protobuf.FieldOptions */
  const upb_FieldDef *rules_ext;         /* validate.rules (extension 1071), or NULL */
};

#endif

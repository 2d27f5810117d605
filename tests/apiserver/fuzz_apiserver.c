/* libFuzzer target for po-apiserver's request-body parsers (built by tests/fuzz/apiserver.cmake).
 * The first byte picks the parser: YAML (then schema checks, merge / strategic patches and
 * server-side apply of each document onto a fixed object), protobuf bodies, JSON patch,
 * selectors and printer-column JSONPath, or a CEL rule. Nothing may crash, leak or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

static const char kObject[] =
    "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"x\"},"
    "\"managedFields\":[{\"manager\":\"m\",\"operation\":\"Apply\",\"fieldsV1\":{\"f:spec\":{\"f:size\":{}}}}]},"
    "\"spec\":{\"size\":3,\"tags\":[\"a\",\"b\"],\"items\":[{\"name\":\"i\",\"v\":1}]},"
    "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";
static const char kSchema[] =
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"required\":[\"size\"],\"properties\":{"
    "\"size\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10},\"color\":{\"type\":\"string\",\"enum\":[\"red\"],"
    "\"default\":\"red\"},\"tags\":{\"type\":\"array\",\"maxItems\":3,\"items\":{\"type\":\"string\",\"maxLength\":4}},"
    "\"extra\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},"
    "\"m\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\"}}}}}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 65536) return 0;
  const char *text = (const char *)data + 1;
  size_t n = size - 1;
  char *z = malloc(n + 1); /* NUL-terminated copy for the parsers that want one */
  memcpy(z, text, n);
  z[n] = 0;
  char msg[1024];
  json_object *obj = json_tokener_parse(kObject);
  switch (data[0] % 5) {
    case 0: {
      json_object *docs = po_As_Yaml_Parse(text, n, msg, sizeof msg);
      json_object *schema = json_tokener_parse(kSchema);
      for (size_t i = 0; docs && i < json_object_array_length(docs) && i < 4; i++) {
        json_object *d = json_object_array_get_idx(docs, i);
        json_object *c = po_As_Copy(d);
        po_As_Causes causes = {0};
        po_As_Schema_Validate(schema, c, &causes);
        json_object_put(causes.causes);
        json_object_put(causes.unknown);
        json_object_put(c);
        json_object_put(po_As_MergePatch(po_As_Copy(obj), d));
        json_object_put(po_As_StrategicPatch(po_As_Copy(obj), d));
        bool conflict;
        json_object_put(po_As_Apply(obj, d, "fuzz", data[0] & 4, "example.com/v1", &conflict, msg, sizeof msg));
        json_object_put(po_As_Apply(NULL, d, "fuzz", false, "example.com/v1", &conflict, msg, sizeof msg));
      }
      json_object_put(schema);
      json_object_put(docs);
      break;
    }
    case 1: {
      char *b = malloc(n + 4);
      memcpy(b, "k8s", 4);
      memcpy(b + 4, text, n);
      json_object_put(po_As_Protobuf_Decode(b, n + 4, msg, sizeof msg));
      free(b);
      break;
    }
    case 2: {
      json_object *ops = json_tokener_parse(z);
      json_object_put(po_As_JsonPatch(po_As_Copy(obj), ops, msg, sizeof msg));
      json_object_put(ops);
      break;
    }
    case 4: {
      char err[256];
      po_As_Cel_Eval(z, obj, err, sizeof err);
      break;
    }
    default: {
      const char *bar = strchr(z, '|');
      char *labels = bar ? strndup(z, (size_t)(bar - z)) : strdup(z);
      po_As_Selector *s = po_As_Selector_Parse(labels, bar ? bar + 1 : NULL, msg, sizeof msg);
      if (s) po_As_Selector_Match(s, obj);
      po_As_Selector_Free(s);
      json_object_put(po_As_JsonPath(obj, z));
      free(labels);
      break;
    }
  }
  json_object_put(obj);
  free(z);
  return 0;
}

#include "reviews.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const po_kTestReviewNames[kReview_Count] = {"typical", "maximal", "maximal-denied", "containers",
                                                         "scalars", "strings", "ef-strings", "ef-numbers", "ef-objects",
                                                         "epp-strings", "epp-numbers", "epp-objects", "po-strings",
                                                         "po-numbers", "po-objects"};

static const char kHead[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\",";

static const char kTypical[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"b1\","
    "\"kind\":{\"group\":\"propertyoverride.io\",\"version\":\"v1alpha1\",\"kind\":\"PropertyOverride\"},"
    "\"operation\":\"CREATE\",\"object\":{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
    "\"metadata\":{\"name\":\"bench\",\"namespace\":\"default\",\"generation\":1},\"spec\":{\"targetRef\":{\"name\":\"api\"},"
    "\"patches\":["
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\",\"services\":[{\"name\":\"db\"}]},"
    "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50},"
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/connect_timeout\",\"value\":\"2.5s\"},"
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/lb_policy\",\"value\":\"LEAST_REQUEST\"},"
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/upstream_connection_options/tcp_keepalive\","
    "\"value\":{\"keepalive_time\":60,\"keepalive_interval\":10}}]}}}}";

/* One ServiceDefaults with 100 builtin/property-override entries of 100 patches each. */
static char *service_defaults(char *w, int value, const char *field) {
  w += sprintf(w, "{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
                  "\"metadata\":{\"name\":\"api\",\"namespace\":\"default\"},\"spec\":{\"envoyExtensions\":[");
  for (int e = 0; e < 100; e++) {
    w += sprintf(w, "%s{\"name\":\"builtin/property-override\",\"arguments\":{\"Patches\":[", e ? "," : "");
    for (int i = 0; i < 100; i++) {
      w += sprintf(w,
                   "%s{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},"
                   "\"Op\":\"add\",\"Path\":\"/outlier_detection/%s\",\"Value\":%d}",
                   i ? "," : "", field, value);
    }
    w += sprintf(w, "]}}");
  }
  return w + sprintf(w, "]}}");
}

/* A list of n units as the one patch value of an EnvoyFilter (kind 0), EnvoyPatchPolicy (1) or
 * PropertyOverride (2): tests/adv/shapes.py's. */
static char *value_list(char *w, int kind, const char *unit, int n) {
  static const char *const head[] = {
      "\"kind\":{\"group\":\"networking.istio.io\",\"version\":\"v1alpha3\",\"kind\":\"EnvoyFilter\"},"
      "\"operation\":\"CREATE\",\"namespace\":\"shop\",\"object\":{\"apiVersion\":\"networking.istio.io/v1alpha3\","
      "\"kind\":\"EnvoyFilter\",\"metadata\":{\"name\":\"e\",\"namespace\":\"shop\"},\"spec\":{\"configPatches\":"
      "[{\"applyTo\":\"CLUSTER\",\"match\":{\"context\":\"SIDECAR_OUTBOUND\"},\"patch\":{\"operation\":\"MERGE\","
      "\"value\":{\"metadata\":{\"filter_metadata\":{\"x\":{\"l\":[",
      "\"kind\":{\"group\":\"gateway.envoyproxy.io\",\"version\":\"v1alpha1\",\"kind\":\"EnvoyPatchPolicy\"},"
      "\"operation\":\"CREATE\",\"namespace\":\"shop\",\"object\":{\"apiVersion\":\"gateway.envoyproxy.io/v1alpha1\","
      "\"kind\":\"EnvoyPatchPolicy\",\"metadata\":{\"name\":\"e\",\"namespace\":\"shop\"},\"spec\":{\"type\":\"JSONPatch\","
      "\"targetRef\":{\"group\":\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"g\"},\"jsonPatches\":"
      "[{\"type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"c\",\"operation\":"
      "{\"op\":\"add\",\"path\":\"/metadata/filter_metadata/x\",\"value\":{\"l\":[",
      "\"kind\":{\"group\":\"propertyoverride.io\",\"version\":\"v1alpha1\",\"kind\":\"PropertyOverride\"},"
      "\"operation\":\"CREATE\",\"namespace\":\"shop\",\"object\":{\"apiVersion\":\"propertyoverride.io/v1alpha1\","
      "\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":\"p\",\"namespace\":\"shop\"},\"spec\":{\"targetRef\":"
      "{\"kind\":\"ServiceDefaults\",\"name\":\"api\"},\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\","
      "\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/metadata/filter_metadata/x\",\"value\":{\"l\":["};
  static const char *const tail[] = {"]}}}}}}]}}}}", "]}}}]}}}}", "]}}]}}}}"};
  w += sprintf(w, "%s%s", kHead, head[kind]);
  for (int i = 0; i < n; i++) w += sprintf(w, "%s%s", i ? "," : "", unit);
  return w + sprintf(w, "%s", tail[kind]);
}

char *po_TestReview_Body(po_TestReview which, size_t *len) {
  size_t cap = 4u << 20;
  char *b = malloc(cap), *w = b;
  if (!b) return NULL;
  switch (which) {
    case kReview_Typical: w += sprintf(w, "%s", kTypical); break;
    case kReview_Maximal:
    case kReview_MaximalDenied: {
      const char *field = which == kReview_Maximal ? "max_ejection_percent" : "max_ejection_percnt";
      w += sprintf(w, "%s\"kind\":{\"group\":\"consul.hashicorp.com\",\"version\":\"v1alpha1\",\"kind\":\"ServiceDefaults\"},"
                      "\"operation\":\"UPDATE\",\"namespace\":\"default\",\"object\":", kHead);
      w = service_defaults(w, 50, field);
      w += sprintf(w, ",\"oldObject\":");
      w = service_defaults(w, 40, field);
      w += sprintf(w, "}}");
      break;
    }
    case kReview_Containers:
    case kReview_Scalars: {
      w += sprintf(w, "%s\"kind\":{\"group\":\"example.com\",\"version\":\"v1\",\"kind\":\"Thing\"},"
                      "\"operation\":\"CREATE\",\"object\":{\"spec\":{\"items\":[", kHead);
      int n = which == kReview_Containers ? 99000 : 399000;
      for (int i = 0; i < n; i++) w += sprintf(w, "%s%s", i ? "," : "", which == kReview_Containers ? "{}" : "1");
      w += sprintf(w, "]}}}}");
      break;
    }
    case kReview_Strings: {
      w += sprintf(w, "%s\"kind\":{\"group\":\"propertyoverride.io\",\"version\":\"v1alpha1\",\"kind\":\"PropertyOverride\"},"
                      "\"operation\":\"CREATE\",\"namespace\":\"default\",\"object\":{\"apiVersion\":\"propertyoverride.io/v1alpha1\","
                      "\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":\"big\",\"namespace\":\"default\"},"
                      "\"spec\":{\"targetRef\":{\"name\":\"api\"},\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\","
                      "\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/name\",\"value\":\"", kHead);
      size_t n = 2600000;
      memset(w, 'x', n);
      w += n;
      w += sprintf(w, "\"}]}}}}");
      break;
    }
    case kReview_EfStrings:
    case kReview_EfNumbers:
    case kReview_EfObjects:
    case kReview_EppStrings:
    case kReview_EppNumbers:
    case kReview_EppObjects:
    case kReview_PoStrings:
    case kReview_PoNumbers:
    case kReview_PoObjects: {
      /* Just within the bounds (review.c): 400,000 values (a few are the envelope's), or
       * 100,000 containers for the objects (three values each). */
      int k = (which - kReview_EfStrings) / 3, u = (which - kReview_EfStrings) % 3;
      static const char *const units[] = {"\"s\"", "1.5", "{\"a\":1}"};
      w = value_list(w, k, units[u], u == 2 ? 99000 : 399000);
      break;
    }
    case kReview_Count: break;
  }
  *len = (size_t)(w - b);
  return b;
}

bool po_TestSanitized(void) {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#endif
#endif
  return false;
}

#include "selfcert.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "po/base/json.h"
#include "po/webhook/certgen.h"

static const po_KubeRef kSecrets = {.group = "", .version = "v1", .resource = "secrets"};
static const po_KubeRef kWebhookConfigs = {.group = "admissionregistration.k8s.io", .version = "v1",
                                           .resource = "validatingwebhookconfigurations"};
static const po_KubeRef kMutatingConfigs = {.group = "admissionregistration.k8s.io", .version = "v1",
                                            .resource = "mutatingwebhookconfigurations"};

/* base64 with GnuTLS (no hand-written codec). Results are malloc'd, NUL-terminated. */
static char *b64(const char *s, bool decode) {
  if (!s) return NULL;
  gnutls_datum_t in = {(unsigned char *)s, (unsigned)strlen(s)}, out = {0};
  if ((decode ? gnutls_base64_decode2(&in, &out) : gnutls_base64_encode2(&in, &out)) < 0) return NULL;
  char *r = malloc(out.size + 1);
  if (r) {
    memcpy(r, out.data, out.size);
    r[out.size] = '\0';
  }
  gnutls_free(out.data);
  return r;
}

static char *b64_encode(const char *s) { return b64(s, false); }
static char *b64_decode(const char *s) { return b64(s, true); }

static bool write_file(const char *dir, const char *name, const char *text, po_CtlStatus *st) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return po_CtlStatus_Set(st, kPo_Ctl_Io, "%s: %s", tmp, strerror(errno));
  chmod(tmp, 0600);
  bool ok = fputs(text, f) >= 0;
  ok = fclose(f) == 0 && ok;
  /* rename: the webhook server never sees a half-written file */
  if (!ok || rename(tmp, path) != 0) return po_CtlStatus_Set(st, kPo_Ctl_Io, "%s: %s", path, strerror(errno));
  return true;
}

typedef struct {
  po_CertPair ca, serving;
} Material;

static void material_free(Material *m) {
  po_CertPair_Free(&m->ca);
  po_CertPair_Free(&m->serving);
}

static bool usable(const Material *m) {
  double ca_days = 0, days = 0;
  return m->ca.cert_pem && m->ca.key_pem && m->serving.cert_pem && m->serving.key_pem &&
         po_Cert_DaysLeft(m->ca.cert_pem, &ca_days) && ca_days > 30 && po_Cert_DaysLeft(m->serving.cert_pem, &days) &&
         days > 30 && po_Cert_IssuedBy(m->serving.cert_pem, m->ca.cert_pem);
}

/* The Secret to write; NULL when memory ran out: a Secret with a key left empty would break the
 * webhook's TLS for every replica. */
static json_object *secret_object(const po_SelfCertOptions *o, const Material *m, json_object *existing) {
  json_object *s = existing ? json_object_get(existing) : json_object_new_object(), *meta = NULL, *data = NULL;
  bool ok = s != NULL;
  if (ok && !existing)
    ok = po_Json_Put(s, "metadata", meta = json_object_new_object()) &&
         po_Json_Put(meta, "name", json_object_new_string(o->secret)) &&
         po_Json_Put(meta, "namespace", json_object_new_string(o->ns)) &&
         po_Json_Put(s, "apiVersion", json_object_new_string("v1")) && po_Json_Put(s, "kind", json_object_new_string("Secret"));
  ok = ok && po_Json_Put(s, "type", json_object_new_string("kubernetes.io/tls")) &&
       po_Json_Put(s, "data", data = json_object_new_object());
  const char *keys[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"};
  const char *vals[] = {m->ca.cert_pem, m->ca.key_pem, m->serving.cert_pem, m->serving.key_pem};
  for (int i = 0; ok && i < 4; i++) {
    char *b = b64_encode(vals[i]);
    ok = b && po_Json_Put(data, keys[i], json_object_new_string(b));
    free(b);
  }
  if (!ok) {
    json_object_put(s);
    return NULL;
  }
  return s;
}

static bool generate(const po_SelfCertOptions *o, Material *m, po_CtlStatus *st) {
  double ca_days = 0;
  bool keep_ca = m->ca.cert_pem && m->ca.key_pem && po_Cert_DaysLeft(m->ca.cert_pem, &ca_days) && ca_days > 365;
  if (!keep_ca) {
    po_CertPair_Free(&m->ca);
    if (!po_Cert_GenerateCA("propertyoverride-webhook-ca", 3650, &m->ca, st)) return false;
  }
  char names[4][512];
  const char *sans[64];
  size_t n = 0;
  snprintf(names[0], sizeof names[0], "%s", o->service);
  snprintf(names[1], sizeof names[1], "%s.%s", o->service, o->ns);
  snprintf(names[2], sizeof names[2], "%s.%s.svc", o->service, o->ns);
  snprintf(names[3], sizeof names[3], "%s.%s.svc.cluster.local", o->service, o->ns);
  for (int i = 0; i < 4; i++) sans[n++] = names[i];
  for (size_t i = 0; i < o->n_sans && n < 64; i++) sans[n++] = o->extra_sans[i];
  po_CertPair_Free(&m->serving);
  return po_Cert_GenerateServing(&m->ca, sans, n, 365, &m->serving, st);
}

/* The caBundle of every webhook of the configuration, set to the CA (PUT on the read
 * resourceVersion, retried on 409). The MutatingWebhookConfiguration of the same name is
 * optional (the chart can leave it out): absent is fine. */
static bool publish_ca_to(po_KubeClient *c, po_KubeRef ref, const char *what, bool optional, const char *name,
                          const char *bundle, po_CtlStatus *st) {
  bool ok = false;
  for (int attempt = 0; attempt < 5 && !ok; attempt++) {
    ref.name = name;
    po_CtlStatus got;
    po_CtlStatus_Clear(&got);
    json_object *vwc = NULL;
    if (!po_KubeClient_Get(c, &ref, &vwc, &got)) {
      if (optional && got.code == kPo_Ctl_NotFound) return true;
      po_CtlStatus_Set(st, got.code, "%s %s: %.500s", what, name, got.message);
      break;
    }
    bool differs = false, oom = false;
    json_object *hooks = po_Json_Get(vwc, "webhooks");
    for (size_t i = 0; !oom && hooks && i < json_object_array_length(hooks); i++) {
      json_object *cc = po_Json_Get(json_object_array_get_idx(hooks, i), "clientConfig");
      if (!cc) continue;
      json_object *cur = po_Json_Get(cc, "caBundle");
      if (!cur || strcmp(json_object_get_string(cur), bundle) != 0) {
        oom = !po_Json_Put(cc, "caBundle", json_object_new_string(bundle));
        differs = true;
      }
    }
    if (oom) { /* nothing written: a webhook with no caBundle (or the old one) would fail its calls */
      json_object_put(vwc);
      po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory (the caBundle of %s %s)", what, name);
      break;
    }
    if (!differs) {
      ok = true;
    } else {
      json_object *out = NULL;
      ok = po_KubeClient_Update(c, &ref, vwc, &out, &got);
      json_object_put(out);
      if (!ok && got.code != kPo_Ctl_Conflict) po_CtlStatus_Set(st, got.code, "updating the caBundle: %.500s", got.message);
      if (!ok && got.code != kPo_Ctl_Conflict) attempt = 5;
    }
    json_object_put(vwc);
  }
  if (!ok && st->code == kPo_Ctl_Ok) {
    po_CtlStatus_Set(st, kPo_Ctl_Conflict, "%s %s: changed by another writer at each of 5 tries", what, name);
  }
  return ok;
}

static bool publish_ca(po_KubeClient *c, const po_SelfCertOptions *o, const char *ca_pem, po_CtlStatus *st) {
  char *bundle = b64_encode(ca_pem);
  if (!bundle) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  bool ok = publish_ca_to(c, kWebhookConfigs, "ValidatingWebhookConfiguration", false, o->webhook_config, bundle, st) &&
            publish_ca_to(c, kMutatingConfigs, "MutatingWebhookConfiguration", true, o->webhook_config, bundle, st);
  free(bundle);
  return ok;
}

bool po_SelfCert_Ensure(po_KubeClient *c, const po_SelfCertOptions *o, bool *changed, po_CtlStatus *st) {
  po_CtlStatus local;
  if (!st) st = &local; /* the caller's may be NULL, as everywhere; whether it was set is read */
  po_CtlStatus_Clear(st);
  *changed = false;
  mkdir(o->dir, 0700);
  Material m = {0};
  bool ok = false;
  for (int attempt = 0; attempt < 5 && !ok; attempt++) {
    material_free(&m);
    po_KubeRef ref = kSecrets;
    ref.ns = o->ns;
    ref.name = o->secret;
    po_CtlStatus got;
    po_CtlStatus_Clear(&got);
    json_object *secret = NULL;
    bool found = po_KubeClient_Get(c, &ref, &secret, &got);
    if (!found && got.code != kPo_Ctl_NotFound) {
      po_CtlStatus_Set(st, got.code, "Secret %s/%s: %.500s", o->ns, o->secret, got.message);
      break;
    }
    json_object *data = po_Json_Get(secret, "data");
    m.ca.cert_pem = b64_decode(json_object_get_string(po_Json_Get(data, "ca.crt")));
    m.ca.key_pem = b64_decode(json_object_get_string(po_Json_Get(data, "ca.key")));
    m.serving.cert_pem = b64_decode(json_object_get_string(po_Json_Get(data, "tls.crt")));
    m.serving.key_pem = b64_decode(json_object_get_string(po_Json_Get(data, "tls.key")));
    if (usable(&m)) {
      json_object_put(secret);
      ok = true;
      break;
    }
    if (!generate(o, &m, st)) {
      json_object_put(secret);
      break;
    }
    json_object *obj = secret_object(o, &m, found ? secret : NULL);
    if (!obj) {
      json_object_put(secret);
      po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory (Secret %s/%s)", o->ns, o->secret);
      break;
    }
    json_object *out = NULL;
    bool wrote = found ? po_KubeClient_Update(c, &ref, obj, &out, &got)
                       : (ref.name = NULL, po_KubeClient_Create(c, &ref, obj, &out, &got));
    json_object_put(out);
    json_object_put(obj);
    json_object_put(secret);
    if (wrote) {
      *changed = true;
      ok = true;
    } else if (got.code != kPo_Ctl_Conflict && got.code != kPo_Ctl_AlreadyExists) {
      po_CtlStatus_Set(st, got.code, "writing Secret %s/%s: %.500s", o->ns, o->secret, got.message);
      break;
    } /* else another replica wrote it first: read theirs */
  }
  /* five tries, each losing to another replica's write: said, not left blank */
  if (!ok && st->code == kPo_Ctl_Ok) {
    po_CtlStatus_Set(st, kPo_Ctl_Conflict, "Secret %s/%s: changed by another writer at each of 5 tries", o->ns, o->secret);
  }
  if (ok) ok = write_file(o->dir, "tls.crt", m.serving.cert_pem, st) &&
               write_file(o->dir, "tls.key", m.serving.key_pem, st) &&
               write_file(o->dir, "ca.crt", m.ca.cert_pem, st);
  if (ok) ok = publish_ca(c, o, m.ca.cert_pem, st);
  material_free(&m);
  return ok;
}

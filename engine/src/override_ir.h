/* Private: the layout of the compiled override (po_Override), shared by the files that build
 * it (override.c) and read it (conflict.c). */
#ifndef PO_ENGINE_OVERRIDE_IR_H_
#define PO_ENGINE_OVERRIDE_IR_H_

#include "compiled.h"

/* The IR (ARCHITECTURE.md section 4): per patch, its filter parsed, its path resolved to a field
 * chain, its value converted (po_CompiledPatch), and the verdict of each input convention, all
 * from one compile. Read-only once built: safe to share between threads. */
struct po_Override {
  po_Arguments args;             /* normalised: ProxyType set, service namespaces defaulted */
  po_CompiledPatch *compiled;    /* one per patch; chain/target NULL when the path did not resolve */
  po_ResourceType *types;
  po_TrafficDirection *dirs;
  po_Verdict (*verdicts)[2];     /* [patch][po_Convention] */
  bool valid;                    /* no error in the compile's own diagnostics */
  bool bare;                     /* compiled against one message, filters not consulted */
  const po_EnvoyApi *api;        /* the snapshot it was compiled under (never NULL) */
  const po_Schema *schema;       /* its schema: a message to patch must be of it */
};

#endif

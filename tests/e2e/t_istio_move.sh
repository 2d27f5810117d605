#!/usr/bin/env bash
# adv1 (issue 12): a valid PropertyOverride moved from an Istio target keeps its EnvoyFilter
# until its patches are written where it points now. A ValidatingWebhookConfiguration that
# refuses every CREATE of a kind (a dead URL, failurePolicy Fail) makes the new target's create
# fail: Service -> Mesh and Mesh -> Service (EnvoyFilter creates refused), Service ->
# ServiceDefaults (ServiceDefaults creates refused): the old EnvoyFilter stays, and goes once the
# new target is written. A move to a ServiceDefaults of another namespace leaves nothing behind.
. "$(dirname "$0")/lib.sh"
PO_NS=platform PO_NAME=m
. "$(dirname "$0")/move_lib.sh"
move_start "$1" --allow-proxydefaults-from platform --allow-cross-namespace-from platform

po '{group: "", kind: Service, name: web}' 1s
eventually "Service: EnvoyFilter written" 30 "1s" ct platform

# --- Service -> Mesh, the new EnvoyFilter's create refused: the old one stays -----------------------
refuse_creates envoyfilters networking.istio.io
po '{group: networking.istio.io, kind: Mesh, name: global}' 2s
programmed_false "Service -> Mesh: the create fails (status says so)"
check "Service -> Mesh, create refused: the Service's EnvoyFilter is still there" holds 3 is ct platform 1s
allow_creates
eventually "Service -> Mesh: written in the root namespace once creates work" 30 "2s" ct istio-system
eventually "Service -> Mesh: then the old one goes" 30 "" efj platform '{.metadata.name}'

# --- Mesh -> Service, the Service's EnvoyFilter create refused: the root one stays ----------------
po '{group: networking.istio.io, kind: Mesh, name: global}' 3s
eventually "Mesh: written" 30 "3s" ct istio-system
eventually "Mesh: nothing in the namespace" 30 "" efj platform '{.metadata.name}'
refuse_creates envoyfilters networking.istio.io
po '{group: "", kind: Service, name: web}' 4s
programmed_false "Mesh -> Service: the create fails (status says so)"
check "Mesh -> Service, create refused: the root EnvoyFilter is still there" holds 3 is ct istio-system 3s
allow_creates
eventually "Mesh -> Service: written once creates work" 30 "4s" ct platform
eventually "Mesh -> Service: then the root one goes" 30 "" efj istio-system '{.metadata.name}'

# --- Service -> ServiceDefaults (a new one), its create refused: the EnvoyFilter stays -------------
refuse_creates servicedefaults consul.hashicorp.com
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: web}' 5s
programmed_false "Service -> ServiceDefaults: the create fails (status says so)"
check "Service -> ServiceDefaults, create refused: the EnvoyFilter is still there" holds 3 is ct platform 4s
allow_creates
eventually "Service -> ServiceDefaults: written once creates work" 30 "m@5" sd_entry
eventually "Service -> ServiceDefaults: then the EnvoyFilter goes" 30 "" efj platform '{.metadata.name}'

# --- Service -> a ServiceDefaults of another namespace: the EnvoyFilter does not stay behind --------
kubectl create namespace infra >/dev/null
po '{group: "", kind: Service, name: web}' 6s
eventually "Service again" 30 "6s" ct platform
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: web, namespace: infra}' 7s
eventually "cross-namespace: written" 30 "m@7" entries servicedefaults web infra
eventually "cross-namespace: the EnvoyFilter goes" 30 "" efj platform '{.metadata.name}'
finish

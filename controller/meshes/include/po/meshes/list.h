/* The meshes: the one list. Each row names a mesh's po_Mesh value, its row of the mesh table
 * (po_MeshOps, po/targets/mesh_ops.h, defined in its folder's src/<mesh>_mesh.c) and its part of a
 * reconcile (po_ReconcileMesh, controller/reconcile/src/run.h, defined in its folder's
 * reconcile/). The mesh table (src/mesh.c) and the reconciler's (controller/reconcile/src/
 * meshes.c) are this list expanded; nothing else names every mesh. Adding a mesh is adding its
 * folder (controller/meshes/<mesh>/) and a row here.
 *
 * No include guard: included once per expansion, with PO_MESH defined by the includer. */
/*      po_Mesh                 table row       reconcile part */
PO_MESH(kPo_Mesh_Consul,        po_Consul_Mesh, po_Consul_Reconcile)
PO_MESH(kPo_Mesh_Istio,         po_Istio_Mesh,  po_Istio_Reconcile)
PO_MESH(kPo_Mesh_EnvoyGateway,  po_EG_Mesh,     po_EG_Reconcile)

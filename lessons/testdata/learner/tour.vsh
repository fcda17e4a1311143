# The tour, taken with other commands than the lesson's.
devices
#! step 2
open_device C
#! hint
open sim0
query_device ctx0
query_port ctx0 port=1
query_gid ctx0 index=1
#! step 6
lesson next
# RTR without a GRH: is_global=0 instead of dlid=0.
mqp qp0 state=rtr dest_qpn=qp0 path_mtu=1024 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12 is_global=0
# RTR with a GRH, other values: the GID written out, path MTU 512.
modify_qp qp0 state=rtr path_mtu=512 dest_qpn=17 rq_psn=5 max_dest_rd_atomic=1 min_rnr_timer=1 dgid=::ffff:10.0.0.1 sgid_index=1

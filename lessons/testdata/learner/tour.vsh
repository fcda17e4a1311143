# The tour, taken with other commands than the lesson's.
devices
#! step 2
open_device C
#! hint
open sim0
#! step 3
# Both devices open: the second is an extra object of the learner's.
open sim1
#! quiet
# The wrong device: the step looks at A's.
query_device ctx1
#! quiet
#! refused
query_device ctx0
#! step 4
query_port ctx0 port=1
#! step 5
# One entry is not the whole table the step reads.
query_gid ctx0 index=1
#! quiet
query_gid ctx0
#! step 6
lesson next
#! step 7
# A look at the port's flags first: on the way.
query_port ctx0
#! quiet
# RTR without a GRH: is_global=0 instead of dlid=0.
mqp qp0 state=rtr dest_qpn=qp0 path_mtu=1024 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12 is_global=0
#! step 8
# RTR with a GRH, written another way: the GID and the QP number written
# out, another PSN (the tutor does not compare PSNs: they are random).
modify_qp qp0 state=rtr path_mtu=IBV_MTU_1024 dest_qpn=0x11 rq_psn=5 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=::ffff:10.0.0.1 sgid_index=1 hop_limit=1

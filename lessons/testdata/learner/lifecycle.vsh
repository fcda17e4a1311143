# The lifecycle, with aliases, other sizes where sizes are minimums, another
# order, and a buffer registered again after a mistake.
open sim0
open sim1
alloc_pd ctx0
alloc_pd ctx1
reg pd0 len=4k access=IBV_ACCESS_LOCAL_WRITE
# A wrong turn: more access than the lesson's buffer has.
reg pd1 len=0x1000 access=local_write,remote_write
#! hint
# Registered again, the MR is mr2: the tutor pairs it with the lesson's mr1.
dereg mr1
reg pd1 len=4096 access=local_write
#! step 4
create_cq ctx0 cqe=20
create_cq ctx1 cqe=31
create_qp pd0 type=IBV_QPT_RC send_cq=cq0 recv_cq=cq0
create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1 max_send_wr=4 max_recv_wr=8
#! step 6
modify_qp qp0 state=rtr
#! hint
mqp qp1 port=1 pkey_index=0 access=0 state=init
mqp qp0 access=0 port=1 state=init pkey_index=0
recv qp1 sge=mr2:0:4096
#! step 8
mqp qp0 state=rtr dest_qpn=qp1 rq_psn=0 path_mtu=1024 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=B sgid_index=1
# A wrong turn: a PSN other than the lesson's 0.
mqp qp1 state=rtr dest_qpn=qp0 rq_psn=100 path_mtu=1024 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=A sgid_index=1
#! hint
# RTR cannot change its PSN: back to RESET, INIT again, the receive again.
mqp qp1 state=reset
mqp qp1 port=1 pkey_index=0 access=0 state=init
recv qp1 sge=mr2:0:4096
mqp qp1 state=rtr dest_qpn=qp0 rq_psn=0 path_mtu=1024 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=A sgid_index=1
mqp qp1 state=rts sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1
mqp qp0 state=rts sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1
fill mr0 "hello"
send qp0 mr=mr0 len=5 wr_id=42
poll cq0 n=1
poll cq1 n=4
mem mr2 0 32
#! step 13
# The wrong object in use: a CQ, where the step asks about the PD.
destroy_cq cq1
#! hint
dealloc_pd pd1
#! step 14
destroy_qp qp1
destroy_qp qp0
dereg mr2
dereg mr0
destroy_cq cq1
destroy_cq cq0
dealloc_pd pd1
dealloc_pd pd0
close ctx1
close ctx0

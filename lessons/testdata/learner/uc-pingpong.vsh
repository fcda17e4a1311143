# uc_pingpong taken another way: B's QP made first (so here qp0 is B's and
# qp1 is A's; the tutor pairs them by PD and CQ), deeper queues, the client
# connected first, GIDs written out, count= for repeat, rounds 2 to 4 one do
# at a time.
lesson next
#! step 2
create_qp pd1 type=IBV_QPT_UC send_cq=cq1 recv_cq=cq1 max_send_wr=2 max_recv_wr=4
#! quiet
#! refused
create_qp pd0 type=IBV_QPT_UC send_cq=cq0 recv_cq=cq0 max_send_wr=1 max_recv_wr=6
#! step 3
# The tutor's own commands name the lesson's qp0 and qp1: it runs them on
# the QPs paired with them, qp1 and qp0 here.
lesson next
#! step 4
# A wrong turn that fails the same way, but on A's QP: the step asks for
# B's. (The tutor says nothing here, though: see the report.)
mqp qp1 state=rtr path_mtu=1024 dest_qpn=qp0 rq_psn=0x4d5e6f max_dest_rd_atomic=1 min_rnr_timer=12 dgid=B sgid_index=1 hop_limit=1
#! refused
mqp qp0 state=IBV_QPS_RTR path_mtu=1024 dest_qpn=qp1 rq_psn=0x1a2b3c max_dest_rd_atomic=1 min_rnr_timer=12 dgid=A sgid_index=1 hop_limit=1
#! step 5
mqp qp1 state=rtr path_mtu=IBV_MTU_1024 dest_qpn=qp0 rq_psn=0x4d5e6f dgid=::ffff:10.0.0.2 sgid_index=1 hop_limit=1
#! quiet
mqp qp1 state=rts sq_psn=0x1a2b3c
mqp qp0 state=rtr path_mtu=1024 dest_qpn=qp1 rq_psn=0x1a2b3c dgid=::ffff:10.0.0.1 sgid_index=1 hop_limit=1
mqp qp0 state=rts sq_psn=0x4d5e6f
#! step 6
send qp1 mr=mr0 wr_id=2
# A wrong turn that fails: no such CQ.
poll cq7
#! hint
poll cq1
send qp0 sge=mr1:0:4096 wr_id=2
# B's CQ before A's.
poll cq1
poll cq0
#! step 7
do send qp1 mr=mr0 wr_id=2; poll cq1 n=1; send qp0 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
#! quiet
do send qp1 mr=mr0 wr_id=2; poll cq1 n=1; send qp0 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
do send qp1 mr=mr0 wr_id=2; poll cq1 n=1; send qp0 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
#! step 8
send qp1 sge=mr0:0:4096 wr_id=2
poll cq1
poll cq0
#! step 9
# A's receives first, one call with count=. (The tutor answers this first
# command of the step with a "not yet" about PSNs, whatever it is, the
# lesson's own included: see the report.)
repeat 3 post_recv qp1 mr=mr0 wr_id=1
repeat 3 recv qp0 sge=mr1:0:4096 wr_id=1
send qp1 mr=mr0 wr_id=2
poll cq1
poll cq0
#! step 10
lesson next
lesson next

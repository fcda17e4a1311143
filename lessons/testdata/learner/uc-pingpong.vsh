# uc_pingpong taken another way: a wrong turn undone with lesson reset,
# the client connected first, rounds 2 to 4 one do at a time.
lesson next
create_qp pd0 type=IBV_QPT_UC send_cq=cq0 recv_cq=cq0 max_send_wr=1 max_recv_wr=6
create_qp pd1 type=IBV_QPT_UC send_cq=cq1 recv_cq=cq1 max_send_wr=2 max_recv_wr=4
lesson next
#! step 4
# A wrong turn: the right UC attributes succeed, and the QP leaves INIT, so
# this step's goal (a refusal, the QP still in INIT) is out of reach.
modify_qp qp1 state=rtr path_mtu=1024 dest_qpn=qp0 rq_psn=0x1a2b3c dgid=A sgid_index=1
lesson reset
#! step 4
mqp qp1 state=rtr path_mtu=1024 dest_qpn=qp0 rq_psn=0x1a2b3c min_rnr_timer=12 dgid=A sgid_index=1
mqp qp0 state=rtr path_mtu=1024 dest_qpn=qp1 rq_psn=0x4d5e6f dgid=::ffff:10.0.0.2 sgid_index=1
mqp qp0 state=rts sq_psn=0x1a2b3c
mqp qp1 state=rtr path_mtu=1024 dest_qpn=qp0 rq_psn=0x1a2b3c dgid=::ffff:10.0.0.1 sgid_index=1
mqp qp1 state=rts sq_psn=0x4d5e6f
#! step 6
send qp0 mr=mr0 wr_id=2
poll cq7
#! hint
poll cq1
send qp1 mr=mr1 wr_id=2
poll cq1
poll cq0
do send qp0 mr=mr0 wr_id=2; poll cq1 n=1; send qp1 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
do send qp0 mr=mr0 wr_id=2; poll cq1 n=1; send qp1 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
do send qp0 mr=mr0 wr_id=2; poll cq1 n=1; send qp1 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
#! step 8
send qp0 mr=mr0 wr_id=2
poll cq1
poll cq0
post_recv qp0 mr=mr0 wr_id=1 count=3
post_recv qp1 mr=mr1 wr_id=1 count=3
send qp0 mr=mr0 wr_id=2
poll cq1
poll cq0
lesson next
lesson next

# rc_pingpong taken another way: libibverbs names, the server's side first
# where the order is free, GIDs written out, rounds 2 and 3 by hand, rounds
# 4 to 6 one do at a time. (No count= for the receives: it counts wr_ids up,
# and rc_pingpong tells a receive from a send by its wr_id, 1 or 2.)
lesson next
#! step 2
# Deeper queues than the lesson asks for: its numbers are minimums.
create_qp pd0 type=IBV_QPT_RC send_cq=cq0 recv_cq=cq0 max_send_wr=2 max_recv_wr=4
#! quiet
#! refused
create_qp pd1 type=IBV_QPT_RC send_cq=cq1 recv_cq=cq1 max_send_wr=1 max_recv_wr=8
#! step 3
mqp qp1 state=IBV_QPS_INIT port=1 pkey_index=0 access=0
mqp qp0 state=IBV_QPS_INIT port=1 pkey_index=0 access=0
#! step 4
# B's side first, with sge=; A's with the alias.
repeat 4 post_recv qp1 sge=mr1:0:4096 wr_id=1
#! quiet
repeat 4 recv qp0 mr=mr0 wr_id=1
#! step 5
pp_dest qp1 gid_index=1 psn=0x4d5e6f
#! quiet
#! refused
pp_dest qp0 gid_index=1 psn=0x1a2b3c
#! step 6
mqp qp1 state=rtr dest_qpn=0x11 rq_psn=0x1a2b3c path_mtu=1024 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=00000000000000000000ffff0a000001 sgid_index=1 hop_limit=1
mqp qp1 state=rts sq_psn=0x4d5e6f timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1
#! step 7
# A wrong turn that fails: RTS before RTR.
mqp qp0 state=rts sq_psn=0x1a2b3c
#! hint
mqp qp0 state=rtr dest_qpn=0x11 rq_psn=0x4d5e6f path_mtu=1024 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=::ffff:10.0.0.2 sgid_index=1 hop_limit=1
mqp qp0 state=rts sq_psn=0x1a2b3c timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1
#! step 8
send qp0 sge=mr0:0:4096 wr_id=2
#! step 9
lesson next
#! step 10
poll cq1 n=1
#! quiet
send qp1 sge=mr1:0:0x1000 wr_id=2
#! step 11
# B's CQ first. (The tutor says the goal is out of reach after poll cq1,
# yet poll cq0 reaches it: see the report.)
poll cq1
poll cq0
#! step 12
send qp0 mr=mr0 wr_id=2
poll cq1 n=1
send qp1 mr=mr1 wr_id=2
poll cq0 n=2
poll cq1 n=1
send qp0 mr=mr0 wr_id=2
poll cq1 n=1
send qp1 mr=mr1 wr_id=2
poll cq0 n=2
poll cq1 n=1
#! step 13
repeat 3 recv qp1 sge=mr1:0:4096 wr_id=1
#! quiet
post_recv qp0 mr=mr0 wr_id=1
post_recv qp0 mr=mr0 wr_id=1
post_recv qp0 sge=mr0:0:4096 wr_id=1
#! step 14
do send qp0 mr=mr0 wr_id=2; poll cq1 n=1; send qp1 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
do send qp0 mr=mr0 wr_id=2; poll cq1 n=1; send qp1 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
do send qp0 mr=mr0 wr_id=2; poll cq1 n=1; send qp1 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
#! step 15
pp_stats size=4k iters=6
lesson next
lesson next

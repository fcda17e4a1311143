# rc_pingpong taken another way: libibverbs names, the server's side first
# where the order is free, GIDs written out, rounds 2 and 3 by hand, rounds
# 4 to 6 one do at a time.
lesson next
create_qp pd0 type=IBV_QPT_RC send_cq=cq0 recv_cq=cq0 max_send_wr=2 max_recv_wr=4
create_qp pd1 type=IBV_QPT_RC send_cq=cq1 recv_cq=cq1 max_send_wr=1 max_recv_wr=8
#! step 3
mqp qp1 state=IBV_QPS_INIT port=1 pkey_index=0 access=0
mqp qp0 state=IBV_QPS_INIT port=1 pkey_index=0 access=0
# One post_recv call for four receives, each with wr_id 1 (the lesson
# repeats four calls).
post_recv qp1 sge=mr1:0:4096 wr_id=1
post_recv qp1 sge=mr1:0:4096 wr_id=1
post_recv qp1 sge=mr1:0:4096 wr_id=1
post_recv qp1 sge=mr1:0:4096 wr_id=1
repeat 4 recv qp0 mr=mr0 wr_id=1
pp_dest qp1 gid_index=1 psn=0x4d5e6f
pp_dest qp0 gid_index=1 psn=0x1a2b3c
#! step 6
mqp qp1 state=rtr dest_qpn=0x11 rq_psn=0x1a2b3c path_mtu=1024 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=00000000000000000000ffff0a000001 sgid_index=1 hop_limit=1
mqp qp1 state=rts sq_psn=0x4d5e6f timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1
mqp qp0 state=rts sq_psn=0x1a2b3c
#! hint
mqp qp0 state=rtr dest_qpn=0x11 rq_psn=0x4d5e6f path_mtu=1024 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=::ffff:10.0.0.2 sgid_index=1 hop_limit=1
mqp qp0 state=rts sq_psn=0x1a2b3c timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1
#! step 8
send qp0 sge=mr0:0:4096 wr_id=2
lesson next
poll cq1 n=1
send qp1 sge=mr1:0:4096 wr_id=2
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
repeat 3 recv qp1 mr=mr1 wr_id=1
repeat 3 recv qp0 mr=mr0 wr_id=1
do send qp0 mr=mr0 wr_id=2; poll cq1 n=1; send qp1 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
do send qp0 mr=mr0 wr_id=2; poll cq1 n=1; send qp1 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
do send qp0 mr=mr0 wr_id=2; poll cq1 n=1; send qp1 mr=mr1 wr_id=2; poll cq0 n=2; poll cq1 n=1
#! step 15
pp_stats size=4k iters=6
lesson next
lesson next

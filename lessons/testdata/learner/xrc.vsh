# XRC taken another way: the domain opened with O_CREAT|O_EXCL,
# a deeper SRQ, the SRQ's number typed out, both QPs walked with the
# attributes of the other half too (the kernel drops them), and mistakes: an
# XRC_RECV QP asked of ibv_create_qp, a receive posted on the QP.
lesson next
#! step 2
# A wrong turn: a private domain, which no other process could find.
open_xrcd ctx1
#! refused
open_xrcd ctx1 file=/tmp/xrc_domain oflags=O_CREAT|O_EXCL
#! step 3
# A wrong turn: a basic SRQ has no domain and no CQ of its own.
create_srq pd1 max_wr=4 max_sge=1
#! refused
create_srq_ex pd1 srq_type=xrc xrcd=xrcd1 cq=cq1 max_wr=8 max_sge=2
#! step 4
get_srq_num srq1
#! step 5
# A wrong turn that fails: ibv_create_qp cannot name a domain.
create_qp pd1 type=xrc_recv send_cq=cq1 recv_cq=cq1
#! hint
create_qp_ex ctx1 type=IBV_QPT_XRC_RECV xrcd=xrcd1
create_qp_ex pd0 type=IBV_QPT_XRC_SEND send_cq=cq0 max_send_wr=2 max_send_sge=1
#! step 6
modify_qp qp1 state=init pkey_index=0 port=1 access=0
modify_qp qp0 state=init pkey_index=0 port=1 access=remote_read,remote_write
#! step 7
modify_qp qp0 state=rtr path_mtu=1024 dest_qpn=qp1 rq_psn=0x1a2b3c max_dest_rd_atomic=0 min_rnr_timer=12 dgid=A sgid_index=1 hop_limit=1
modify_qp qp0 state=rts sq_psn=0x4d5e6f timeout=14 retry_cnt=7 rnr_retry=7
modify_qp qp1 state=rtr path_mtu=1024 dest_qpn=qp0 rq_psn=0x4d5e6f max_dest_rd_atomic=0 min_rnr_timer=12 dgid=B sgid_index=1 hop_limit=1
modify_qp qp1 state=rts sq_psn=0x1a2b3c timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=0
#! step 8
# A wrong turn that fails: an XRC_RECV QP has no receive queue.
post_recv qp0 mr=mr1 wr_id=1
#! hint
post_srq_recv srq1 mr=mr1 wr_id=1
post_send qp1 mr=mr0 length=64 wr_id=2 remote_srqn=0x020002
#! step 9
poll_cq cq1
poll_cq cq0
#! step 10
trace on
post_srq_recv srq1 sge=mr1:0:4096 wr_id=1
send qp1 mr=mr0 length=64 wr_id=3 srqn=srq1
trace off
poll_cq cq0
poll_cq cq1
#! step 11
post_send qp1 mr=mr0 length=64 wr_id=4 remote_srqn=0x123456
poll_cq cq0
#! step 12
# The basic SRQ made by mistake goes first: nothing of the lesson uses it.
destroy_srq srq0
#! quiet
close_xrcd xrcd1
#! step 13
lesson next

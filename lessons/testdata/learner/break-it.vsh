# break-it taken another way: aliases, SGEs spelled out, by hand where the
# lesson uses count= and a bigger count where it overfills the send queue,
# the peer's GID by its context, remote_addr= and rkey= for remote=, another
# sq_psn where the peer is in RESET.
lesson next
#! step 2
# No address vector at all fails too, but for another reason than the
# step's: IBV_QP_AV missing, where the step gives a LID and no GRH.
mqp qp0 state=rtr path_mtu=1024 dest_qpn=qp1 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12
#! refused
mqp qp0 min_rnr_timer=12 max_dest_rd_atomic=1 rq_psn=0 dest_qpn=qp1 path_mtu=IBV_MTU_1024 state=rtr dlid=1
#! step 3
mqp qp0 state=rtr path_mtu=1024 dest_qpn=qp1 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=ctx1 sgid_index=1 hop_limit=64
#! step 4
# The failure must be the step's own post_send with mr=: written with sge=
# the judge does not count it (a suspected judge problem), and a second
# attempt would queue a second WR in rxe's send queue.
send qp0 mr=mr0 len=8 wr_id=7
#! step 5
lesson next
#! step 6
#! predict IBV_WC_RNR_RETRY_EXC_ERR
# RTS without its attributes: refused.
mqp qp0 state=rts
#! hint
mqp qp0 state=rts sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=0 max_rd_atomic=1
send qp0 sge=mr0:0:8 wr_id=42
poll cq0 wait=500ms
#! step 7
repeat 4 send qp0 sge=mr0:0:8
#! refused
#! quiet
poll cq0 n=4
#! step 8
lesson next
lesson next
#! step 10
send qp0 sge=mr3:0:8 flags=0 wr_id=100
poll cq0
#! step 11
lesson next
#! step 12
send qp0 sge=mr0:8000:500 wr_id=101
poll cq0
#! step 13
lesson next
#! step 14
#! predict rem_access_err
send qp0 opcode=IBV_WR_RDMA_WRITE sge=mr0:0:8 remote_addr=mr2 rkey=mr2
poll cq0
#! step 15
lesson next
#! step 16
send qp0 opcode=IBV_WR_RDMA_WRITE sge=mr0:0:8 remote_addr=mr1 rkey=mr1
poll cq0
#! step 17
lesson next
#! step 18
recv qp1 sge=mr1:0:16
#! quiet
send qp0 sge=mr0:0:64
poll cq1
poll cq0 wait=1s
#! step 19
lesson next
#! step 20
#! predict IBV_WC_SUCCESS
recv qp3 sge=mr1:0:64
send qp2 sge=mr0:0:64 ah=ah0 remote_qpn=qp3
poll cq1
poll cq0
#! step 21
lesson next
#! step 22
# 40 in one call: the first 31 are posted, as with the lesson's 32.
send qp0 mr=mr0 len=8 count=40
#! step 23
lesson next
#! step 24
lesson next
#! step 25
mqp qp0 state=rts sq_psn=5 timeout=14 retry_cnt=3 rnr_retry=7 max_rd_atomic=1
send qp0 sge=mr0:0:8
poll cq0 wait=1s
#! step 26
lesson next
#! step 27
send qp0 sge=mr0:0:4096
poll cq0 wait=200ms
#! step 28
mqp qp0 state=IBV_QPS_ERR
poll cq0 n=1
#! step 29
lesson next
#! step 30
repeat 4 send qp4 sge=mr0:0:8
poll cq1
poll cq2
#! step 31
lesson next
#! step 32

# paths taken another way: aliases, sizes in hex and with suffixes, a CQ
# resized up to size, the receives posted one by one and the sends batched
# in twos, the explanations asked for by libibverbs name.
lesson next
#! step 2
# Remote write without local write: ibv_reg_mr refuses it (EINVAL).
reg pd0 len=0x1000 access=remote_write
#! hint
reg pd0 len=4k access=IBV_ACCESS_LOCAL_WRITE
create_cq ctx0 cqe=16
resize_cq cq0 cqe=100
create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0 max_send_wr=8 max_recv_wr=8
#! step 3
lesson next
#! step 4
paths all
#! step 5
repeat 4 recv qp0 mr=mr0 offset={i}00 length=64
send qp0 mr=mr0 offset=2048 length=8 count=2
send qp0 mr=mr0 offset=2048 length=8 count=2
poll cq0 n=4 wait=2s
poll cq0 n=4 wait=2s
#! step 6
paths ibv_post_send
#! step 7
recv qp0 sge=mr0:0:64 count=4
send qp0 sge=mr0:2048:8 count=4
poll cq0 n=8 wait=2s
paths
#! step 8
reg pd0 len=0x1000000 access=local_write
#! step 9
dereg mr1
#! step 10
paths
#! step 11

# paths taken another way: aliases, sizes in hex and with suffixes, a CQ
# resized up to size and a QP with queues of its own sizes, the receives
# the four sends typed by hand where the lesson uses repeat, each in another
# form.
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
# Every verb, called or not: not the step's own count.
paths all
#! refused
#! quiet
paths
#! step 5
recv qp0 mr=mr0 length=64 count=4
send qp0 sge=mr0:2048:8
send qp0 sge=mr0:0x800:8 wr_id=2
send qp0 mr=mr0 offset=2k length=8
send qp0 mr=mr0 offset=2048 len=8
poll cq0 n=4 wait=2s
poll cq0 n=4 wait=2s
#! step 6
# Every verb's row is more than the step asks to look at.
paths all
#! refused
#! quiet
# The libibverbs name shows the same row.
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

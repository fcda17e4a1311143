# atomics taken another way: libibverbs names, SGEs and remote addresses
# spelled out, the race by hand, the lock taken by qp2's swap of 7 first.
lesson next
# Remote atomic without local write: ibv_reg_mr refuses it.
reg pd1 len=64 access=remote_atomic
#! hint
reg pd0 len=64 access=IBV_ACCESS_LOCAL_WRITE
reg pd1 len=64 access=IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_ATOMIC
#! step 3
lesson next
#! step 4
send qp0 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD sge=mr0:0:8 remote_addr=mr1 rkey=mr1 add=1 wr_id=100
send qp2 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD sge=mr0:8:8 remote_addr=mr1 rkey=mr1 add=1 wr_id=200
poll cq0 n=2
#! step 5
send qp2 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD sge=mr0:8:8 remote=mr1+0 add=1
send qp0 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD sge=mr0:0:8 remote=mr1+0 add=1
send qp2 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD sge=mr0:8:8 remote=mr1+0 add=1
send qp0 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD sge=mr0:0:8 remote=mr1+0 add=1
send qp0 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD sge=mr0:0:8 remote=mr1+0 add=1
send qp2 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD sge=mr0:8:8 remote=mr1+0 add=1
poll cq0
#! step 6
send qp0 opcode=IBV_WR_ATOMIC_CMP_AND_SWP sge=mr0:16:8 remote_addr=mr1+8 rkey=mr1 compare=0 swap=1
send qp2 opcode=IBV_WR_ATOMIC_CMP_AND_SWP sge=mr0:24:8 remote_addr=mr1+8 rkey=mr1 compare=0 swap=2
poll cq0
#! step 7
send qp0 opcode=IBV_WR_ATOMIC_CMP_AND_SWP sge=mr0:40:8 remote_addr=mr1+8 rkey=mr1 compare=1 swap=0
send qp2 opcode=IBV_WR_ATOMIC_CMP_AND_SWP sge=mr0:24:8 remote_addr=mr1+8 rkey=mr1 compare=0 swap=2
poll cq0
#! step 8
post_send qp2 opcode=IBV_WR_ATOMIC_FETCH_AND_ADD sge=mr0:32:4 remote=mr1 add=1
#! step 9
lesson next
#! step 10
send qp0 opcode=IBV_WR_ATOMIC_CMP_AND_SWP sge=mr0:48:8 remote_addr=mr2 rkey=mr2 compare=0 swap=1
poll cq0 wait=1s
#! step 11

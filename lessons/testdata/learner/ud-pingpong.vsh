# ud_pingpong taken another way: the Q_Key in decimal, B's side first where
# the order is free, the GIDs written out, sge= for mr=, rounds one do at a
# time.
lesson next
#! step 2
# The wrong device first: B's port, where the step looks at A's.
query_port ctx1 port=1
#! quiet
#! refused
query_port ctx0 port=1
#! step 3
lesson next
#! step 4
create_qp pd0 type=IBV_QPT_UD send_cq=cq0 recv_cq=cq0 max_send_wr=2 max_recv_wr=4
#! quiet
create_qp pd1 type=IBV_QPT_UD send_cq=cq1 recv_cq=cq1 max_send_wr=1 max_recv_wr=4
#! step 5
mqp qp1 state=init qkey=286331153 port=1 pkey_index=0
mqp qp0 state=IBV_QPS_INIT qkey=0x11111111 port=1 pkey_index=0
#! step 6
# The receives: B's first, the whole buffer written as an sge.
repeat 4 recv qp1 sge=mr1:0:1064 wr_id=1
#! quiet
#! refused
repeat 4 recv qp0 mr=mr0 wr_id=1
#! step 7
pp_dest qp1 psn=0x4d5e6f gid_index=1
pp_dest qp0 psn=0x1a2b3c gid_index=1
#! step 8
# A's side first this time.
mqp qp0 state=rtr
mqp qp0 state=rts sq_psn=0x1a2b3c
mqp qp1 state=IBV_QPS_RTR
mqp qp1 state=IBV_QPS_RTS sq_psn=0x4d5e6f
#! step 9
# A wrong turn that fails: there is no GID at index 9.
create_ah pd0 dgid=B sgid_index=9 hop_limit=1
#! hint
create_ah pd0 dgid=::ffff:10.0.0.2 sgid_index=1 hop_limit=1
create_ah pd1 dgid=00000000000000000000ffff0a000001 sgid_index=1 hop_limit=1
#! step 10
#! predict 1064
# A wrong turn that fails: a UD send with no address handle. (The tutor
# says the goal is out of reach here, which it is not: see the report.)
send qp0 mr=mr0 offset=40 length=1024 wr_id=2 remote_qpn=qp1
#! refused
send qp0 sge=mr0:40:1024 wr_id=2 ah=ah0 remote_qpn=qp1
mem mr1 0 0x30
#! quiet
poll cq1 n=1
#! step 11
send qp1 sge=mr1:40:1024 wr_id=2 ah=ah1 remote_qpn=qp0 remote_qkey=286331153
poll cq0
poll cq1
#! step 12
# Round by round. (After rounds 2 and 3 the tutor says "not yet" about the
# IPv4 header in A's buffer, whose ID and checksum are those of the last
# packet: see the report.)
do send qp0 mr=mr0 offset=40 length=1024 wr_id=2 ah=ah0 remote_qpn=qp1; poll cq1 n=1; send qp1 mr=mr1 offset=40 length=1024 wr_id=2 ah=ah1 remote_qpn=qp0; poll cq0 n=2; poll cq1 n=1
#! refused
do send qp0 mr=mr0 offset=40 length=1024 wr_id=2 ah=ah0 remote_qpn=qp1; poll cq1 n=1; send qp1 mr=mr1 offset=40 length=1024 wr_id=2 ah=ah1 remote_qpn=qp0; poll cq0 n=2; poll cq1 n=1
do send qp0 mr=mr0 offset=40 length=1024 wr_id=2 ah=ah0 remote_qpn=qp1; poll cq1 n=1; send qp1 mr=mr1 offset=40 length=1024 wr_id=2 ah=ah1 remote_qpn=qp0; poll cq0 n=2; poll cq1 n=1
#! step 13
lesson next
#! step 14
#! predict success
send qp0 sge=mr2:40:2k wr_id=2 ah=ah0 remote_qpn=qp1
# B's CQ first: it stays empty.
poll cq1
#! quiet
poll cq0
#! step 15
lesson next
lesson next

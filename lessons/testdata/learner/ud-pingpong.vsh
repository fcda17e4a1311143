# ud_pingpong taken another way: the Q_Key in decimal, one post_recv call
# for four receives, the GIDs written out, rounds one do at a time.
lesson next
query_port ctx1 port=1
lesson next
create_qp pd0 type=IBV_QPT_UD send_cq=cq0 recv_cq=cq0 max_send_wr=1 max_recv_wr=4
create_qp pd1 type=IBV_QPT_UD send_cq=cq1 recv_cq=cq1 max_send_wr=1 max_recv_wr=4
#! step 5
mqp qp1 state=init qkey=286331153 port=1 pkey_index=0
mqp qp0 state=init qkey=0x11111111 port=1 pkey_index=0
post_recv qp0 mr=mr0 wr_id=1 count=4
post_recv qp1 sge=mr1:0:1064 wr_id=1 count=4
pp_dest qp1 psn=0x4d5e6f gid_index=1
pp_dest qp0 psn=0x1a2b3c gid_index=1
#! step 8
mqp qp0 state=rtr
mqp qp0 state=rts sq_psn=0x1a2b3c
mqp qp1 state=rtr
mqp qp1 state=rts sq_psn=0x4d5e6f
create_ah pd0 dgid=::ffff:10.0.0.2 sgid_index=1 hop_limit=1
create_ah pd1 dgid=00000000000000000000ffff0a000001 sgid_index=1 hop_limit=1
#! step 10
send qp0 mr=mr0 offset=40 length=1024 wr_id=2 remote_qpn=qp1
#! hint
send qp0 mr=mr0 offset=40 length=1024 wr_id=2 ah=ah0 remote_qpn=qp1
poll cq1 n=1
send qp1 mr=mr1 offset=40 length=1024 wr_id=2 ah=ah1 remote_qpn=qp0
poll cq1
poll cq0
#! step 12
do send qp0 mr=mr0 offset=40 length=1024 wr_id=2 ah=ah0 remote_qpn=qp1; poll cq1 n=1; send qp1 mr=mr1 offset=40 length=1024 wr_id=2 ah=ah1 remote_qpn=qp0; poll cq0 n=2; poll cq1 n=1
do send qp0 mr=mr0 offset=40 length=1024 wr_id=2 ah=ah0 remote_qpn=qp1; poll cq1 n=1; send qp1 mr=mr1 offset=40 length=1024 wr_id=2 ah=ah1 remote_qpn=qp0; poll cq0 n=2; poll cq1 n=1
do send qp0 mr=mr0 offset=40 length=1024 wr_id=2 ah=ah0 remote_qpn=qp1; poll cq1 n=1; send qp1 mr=mr1 offset=40 length=1024 wr_id=2 ah=ah1 remote_qpn=qp0; poll cq0 n=2; poll cq1 n=1
lesson next
send qp0 mr=mr2 offset=40 length=4096 wr_id=2 ah=ah0 remote_qpn=qp1
poll cq1
poll cq0
lesson next
lesson next

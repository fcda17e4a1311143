# events taken another way: aliases, SGEs spelled out, other waits, two
# posts for count=2, polls split or joined, the event taken before A's own
# poll, the solicited flag by its libibverbs name, SQD without
# en_sqd_async_notify, a solicited arm upgraded by a plain one.
lesson next
#! step 2
poll cq1
poll cq1 n=1
poll cq1 n=4
#! step 3
# Waiting before arming: it fails as the step's own get_cq_event does, but
# before the arm it is to probe, so it does not count. ("! " marks the lines
# that must fail, as in the lesson: run as a script, a failure the tutor
# takes without a word would otherwise stop it.)
! get_cq_event ch0
#! refused
# Armed for solicited completions only: not the arm this step makes.
req_notify_cq cq1 solicited
#! hint
# Armed again for any completion: rxe upgrades the arm.
req_notify_cq cq1
#! refused
! get_cq_event ch0 wait=10ms
#! step 4
send qp0 sge=mr0:0:16 wr_id=100
get_cq_event ch0 wait=2s
poll cq0
#! step 5
ack_cq_events cq1 n=1
req_notify_cq cq1
poll cq1 n=1
poll cq1 n=8
#! step 6
send qp0 sge=mr0:0:16 wr_id=101
send qp0 sge=mr0:0:16 wr_id=102
get_cq_event ch0 wait=1s
! get_cq_event ch0 wait=10ms
poll cq0 n=4 wait=500ms
poll cq1 n=1
poll cq1 n=1
ack_cq_events cq1
#! step 7
send qp0 sge=mr0:0:16 wr_id=103
poll cq0 n=1 wait=1s
req_notify_cq cq1
! get_cq_event ch0
poll cq1
#! step 8
send qp0 sge=mr0:0:16 wr_id=104
poll cq1 n=1 wait=1s
get_cq_event ch0 wait=1s
ack_cq_events cq1
poll cq0 n=1 wait=1s
poll cq1
#! step 9
req_notify_cq cq1 solicited_only
send qp0 sge=mr0:0:16 wr_id=105 flags=signaled
! get_cq_event ch0 wait=50ms
poll cq0
#! step 10
send qp0 sge=mr0:0:16 wr_id=106 flags=IBV_SEND_SIGNALED|IBV_SEND_SOLICITED
get_cq_event ch0 wait=1s
ack_cq_events cq1
poll cq0 n=1 wait=1s
poll cq1 n=4
#! step 11
req_notify_cq cq1 solicited
mqp qp1 state=IBV_QPS_ERR
get_cq_event ch0 wait=1s
poll cq1 n=2
poll cq1
#! step 12
destroy_qp qp1
destroy_cq cq1
#! step 13
# The channel first: a CQ still uses it.
destroy_comp_channel ch0
#! hint
ack_cq_events cq1
#! quiet
destroy_cq cq1
destroy_comp_channel ch0
#! step 14
pingpong rc A B n=200 events
pingpong rc A B iters=0xc8 size=4096
#! step 15
lesson next
#! step 16
modify_srq srq0 limit=3
send qp2 sge=mr0:0:16 count=2
poll cq2 n=2 wait=1s
async_events ctx1
poll cq0 n=2 wait=1s
#! step 17
lesson next
#! step 18
# rxe raises SQ_DRAINED whether en_sqd_async_notify is set or not.
modify_qp qp2 state=sqd
async_events ctx0 wait=1s
#! step 19
lesson next
#! step 20

# A learner who builds the wrong QP must not pass step 2.
open_device A
alloc_pd ctx0
create_cq ctx0 cqe=16
#! step 2
create_qp pd0 type=uc send_cq=cq0 recv_cq=cq0
#! refused
destroy_qp qp0
create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0
#! done

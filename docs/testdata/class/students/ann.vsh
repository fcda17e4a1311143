open_device A
alloc_pd ctx0
create_cq ctx0 cqe=16
predict IBV_QPS_RESET
create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0

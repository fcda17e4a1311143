open_device A
alloc_pd ctx0
create_cq ctx0 cqe=4
lesson hint
lesson hint
create_cq ctx0 cqe=16
predict IBV_QPS_INIT
lesson skip

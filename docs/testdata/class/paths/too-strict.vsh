open_device A
alloc_pd ctx0
create_cq ctx0 cqe=64
#! refused

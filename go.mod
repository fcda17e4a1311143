module github.com/vsh-rdma/vsh

go 1.26

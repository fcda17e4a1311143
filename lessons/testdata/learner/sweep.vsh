# sweep taken another way: the options' other names (test=, n=, t=,
# max_size=, path_mtu=), other sizes, counts and depths, the operations in
# another order, a 4200-byte netdev and 20 µs cables.
# perftest's tests are bw and lat; "latency" is not one of them.
bench op=write mode=latency
#! hint
bench op=write test=lat max_size=256k lat_iters=10
#! step 2
bench op=write test=lat min=1k max=8k lat_iters=5 path_mtu=2048 netdev_mtu=4200
#! step 3
bench op=read,send test=lat max=1k lat_iters=8 chart=off
#! step 4
bench op=write test=bw min=1k max=64k n=200
#! step 5
bench op=write test=bw min=128 max=128 n=1000 t=1 chart=0
bench op=write test=bw min=128 max=128 n=1000 t=64 chart=0
bench op=write test=bw min=128 max=128 n=1000 t=256 chart=0
#! step 6
bench op=write test=bw min=8k max=8k n=300 t=1 delay=20us chart=0
bench op=write test=bw min=8k max=8k n=300 t=16 delay=20us chart=0
bench op=write test=bw min=8k max=8k n=300 t=64 delay=20us chart=0
bench op=write test=bw min=8k max=8k n=600 t=200 delay=20us chart=0
#! step 7

# sweep taken another way: the lesson's experiments with the options' other
# names (test=, n=, t=, min_size=, max_size=, path_mtu=, latency= for
# delay=), sizes written otherwise (1M, 16384, 0x1000), the default depth
# spelled out, the three latency tests named one by one.
# perftest's tests are bw and lat; "latency" is not one of them.
bench op=write mode=latency
#! hint
bench op=write test=lat min_size=64 max_size=1M lat_iters=20
#! step 2
# 16 MiB is past bench's largest size (8 MiB): refused.
bench op=write test=lat min=256 max=16M lat_iters=10 path_mtu=4096 netdev_mtu=9000
#! refused
bench op=write test=lat min_size=256 max_size=16384 lat_iters=10 path_mtu=4096 netdev_mtu=9000
#! step 3
bench op=send,write,read test=lat max_size=4k lat_iters=20 chart=off
#! step 4
bench op=write test=bw max_size=256k n=300
#! step 5
bench op=write test=bw min=64 max=64 n=2000 t=1 chart=off
#! quiet
bench op=write test=bw min=64 max=64 n=2000 t=128 chart=off
bench op=write test=bw min=64 max=64 n=2000 t=512 chart=off
#! step 6
bench op=write min_size=0x1000 max_size=0x1000 n=400 lat_iters=5 t=1 latency=10us chart=off
bench op=write test=bw min=4k max=4k n=400 t=32 latency=10us chart=off
bench op=write test=bw min=4k max=4k n=400 t=128 latency=10us chart=off
bench op=write test=bw min=4k max=4k n=1000 t=256 latency=10us chart=off
#! step 7

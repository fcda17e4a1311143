/*
 * emptypoll gives up on a completion after N empty polls, as students'
 * timeout loops do: on hardware N polls take N times a few hundred
 * nanoseconds, and they must not take much longer on the simulator.
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000, i, num;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct ibv_wc wc;

	if (!list || num < 1 || !(ctx = ibv_open_device(list[0])) ||
	    !(cq = ibv_create_cq(ctx, 16, NULL, NULL, 0))) {
		perror("setup");
		return 1;
	}
	for (i = 0; i < n; i++)
		if (ibv_poll_cq(cq, 1, &wc) != 0) {
			printf("a completion out of nowhere\n");
			return 1;
		}
	printf("%d empty polls\n", n);
	ibv_destroy_cq(cq);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}

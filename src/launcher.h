/*
 * launcher.h - `shakedown run --local N`: N ranks of this command on this
 * host, started and supervised by this process (see launcher.c).
 */
#ifndef SD_LAUNCHER_H
#define SD_LAUNCHER_H

/*
 * Fork N ranks, run each child through `child_main`, supervise them, and
 * return the exit status for the whole run (rank 0's, or 4 when a rank
 * died).  timeout_ms bounds one rendezvous round.
 */
int sd_local_launch(int nranks, int timeout_ms, int (*child_main)(void *arg),
		    void *arg);

#endif

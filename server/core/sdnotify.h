/* sdnotify.h -- the service manager's readiness and watchdog protocol,
 * written by hand (it is one datagram): under systemd with Type=notify,
 * $NOTIFY_SOCKET names a Unix datagram socket ("/run/..." or "@abstract")
 * that takes "READY=1", "STOPPING=1", "STATUS=..." and "WATCHDOG=1" lines.
 * Outside systemd every call is a no-op.
 */
#ifndef DV_SDNOTIFY_H
#define DV_SDNOTIFY_H

/* Sends `state` ("READY=1\nSTATUS=listening") to $NOTIFY_SOCKET. Returns 1
 * when sent, 0 when there is no socket to send to, -1 on an error. */
int sdnotify_send(const char *state);

/* The watchdog interval systemd asked for ($WATCHDOG_USEC, when
 * $WATCHDOG_PID is unset or this process), in milliseconds; 0 when none. */
unsigned long sdnotify_watchdog_ms(void);

#endif /* DV_SDNOTIFY_H */

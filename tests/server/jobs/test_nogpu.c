/* test_nogpu.c -- the worker of a build without CUDA (jobs/nogpu.h) speaks
 * the worker protocol: a hello with no device and the reason, then every
 * job refused with DV_ENOGPU and that reason, and a clean exit when the
 * server closes its end. Run in a child on fds 3 and 4, as the supervisor
 * runs a worker. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/jobs/nogpu.h"
#include "server/jobs/wire.h"

Test(nogpu, says_why_and_refuses_every_job) {
    int to_child[2], from_child[2];
    char err[ERR_LEN];
    cr_assert_eq(pipe(to_child), 0);
    cr_assert_eq(pipe(from_child), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        dup2(to_child[0], WIRE_FD_IN);
        dup2(from_child[1], WIRE_FD_OUT);
        close(to_child[1]);
        close(from_child[0]);
        _exit(nogpu_worker_main());
    }
    close(to_child[0]);
    close(from_child[1]);
    signal(SIGPIPE, SIG_IGN);
    char *msg = NULL;
    size_t len = 0;
    cr_assert_eq(wire_read(from_child[0], &msg, &len, 5000, err), WIRE_OK, "%s", err);
    json_t *hello = json_loads(msg, 0, NULL);
    free(msg);
    json_t *dev = json_object_get(hello, "device");
    cr_expect(json_is_false(json_object_get(dev, "present")));
    cr_expect(strstr(json_string_value(json_object_get(dev, "reason")), "measuring needs the CUDA toolkit"));
    json_decref(hello);
    for (int i = 0; i < 3; i++) {
        char job[128];
        snprintf(job, sizeof job, "{\"id\": \"job%d\", \"kind\": \"measure\", \"request\": {}}", i);
        cr_assert_eq(wire_write(to_child[1], job, strlen(job), err), 0, "%s", err);
        cr_assert_eq(wire_read(from_child[0], &msg, &len, 5000, err), WIRE_OK, "%s", err);
        json_t *reply = json_loads(msg, 0, NULL);
        free(msg);
        char id[16];
        snprintf(id, sizeof id, "job%d", i);
        cr_expect_str_eq(json_string_value(json_object_get(reply, "id")), id);
        cr_expect(json_is_false(json_object_get(reply, "ok")));
        cr_expect_eq(json_integer_value(json_object_get(reply, "code")), DV_ENOGPU);
        cr_expect_str_eq(json_string_value(json_object_get(reply, "error")), NOGPU_REASON);
        json_decref(reply);
    }
    close(to_child[1]);
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exits 0 when the server closes its end (status %d)", st);
    close(from_child[0]);
}

/* `divergence worker`, the command the server starts by default where the
 * build has no divergence-gpu: its hello says there is no GPU, and why (in a
 * build with CUDA it is divergence-gpu's, on a machine without a GPU). */
Test(nogpu, the_worker_command_says_there_is_no_gpu_here) {
    char gpu[1024], err[ERR_LEN];
    snprintf(gpu, sizeof gpu, "%s/divergence-gpu", DV_TEST_BUILD_DIR);
    const int with_cuda = access(gpu, X_OK) == 0;
    int to_child[2], from_child[2];
    cr_assert_eq(pipe(to_child), 0);
    cr_assert_eq(pipe(from_child), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        dup2(to_child[0], WIRE_FD_IN);
        dup2(from_child[1], WIRE_FD_OUT);
        close(to_child[1]);
        close(from_child[0]);
        execl(DV_TEST_BINARY, DV_TEST_BINARY, "worker", (char *)NULL);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    char *msg = NULL;
    size_t len = 0;
    cr_assert_eq(wire_read(from_child[0], &msg, &len, 20000, err), WIRE_OK, "%s", err);
    json_t *hello = json_loads(msg, 0, NULL);
    free(msg);
    json_t *dev = json_object_get(hello, "device");
    const char *reason = json_string_value(json_object_get(dev, "reason"));
    if (json_is_true(json_object_get(dev, "present"))) {
        cr_expect(with_cuda, "a build without CUDA reported a GPU");
    } else {
        cr_expect(reason && reason[0], "no reason for no GPU");
        if (!with_cuda) cr_expect_str_eq(reason, NOGPU_REASON);
    }
    json_decref(hello);
    close(to_child[1]);
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    close(from_child[0]);
}

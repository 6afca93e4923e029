// SPDX-License-Identifier: GPL-2.0
/*
 * /init of the pmuvisor Linux guest.
 *
 * Mounts proc, sysfs, devtmpfs and a tmpfs on /tmp, reads
 * "pmuvisor.run=<name>" from /proc/cmdline and runs the built-in script of
 * that name (default "perf-demo"), printing "=== <title> ===" before each
 * step and "=== done ===" at the end, then powers off (SBI SRST).
 * "pmuvisor.run=shell" runs BusyBox sh on the console instead;
 * "pmuvisor.delay=<ms>" sleeps before the script.
 *
 * The same binary is /bin/timeit and /bin/mkdata (links to /init; the name
 * it is run by chooses): timeit runs a command and prints its elapsed
 * CLOCK_MONOTONIC time, mkdata writes a deterministic text file (the input
 * of the gzip workload of tools/e2e.py).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS     32
#define LINE_MAX_LEN 1024

struct step {
	const char *title; /* marker line; NULL: no marker */
	const char *cmd;   /* command line, split on spaces */
};

struct script {
	const char *name;
	const struct step *steps;
};

/*
 * perf record opens one event per CPU for the task, each with its own
 * period: a task that moves to another vCPU leaves a partial period behind,
 * so a recording may hold one sample less per further CPU of the guest
 * (tools/check_linux.py). --sample-cpu lets perf script name the CPUs.
 */
#define RECORD(ev) "/bin/perf record --sample-cpu " ev "-c 100000 -o /tmp/perf.data /bin/loop-5m"
#define RECORD_5M  RECORD("-e instructions:u ")
#define RECORD_CYC RECORD("-e cycles:u ")
#define REPORT	   "/bin/perf report -i /tmp/perf.data --stdio"
#define SCRIPT_IP  "/bin/perf script -i /tmp/perf.data -F cpu,ip"
#define FW_EVENTS  "r8000000000000005,r8000000000000006,r8000000000000007"
/* every sample with its CPU, task, time and period, and the mappings perf resolved them by */
#define SCRIPT_SAMPLES                                                                             \
	"/bin/perf script -i /tmp/perf.data -F cpu,tid,time,ip,sym,symoff,period "                 \
	"--show-mmap-events"
/*
 * A sample every 97 user instructions of BusyBox's `true`: about 140, many of
 * them in its startup code (_start, main, find_applet_by_name) at the start of
 * its text, where perf names samples by data objects when it places them by
 * a split debug file's program headers (docs/linux-guest.md).
 */
#define RECORD_TRUE "/bin/perf record -e instructions:u -c 97 -o /tmp/perf.data /bin/true"
/* every standard SBI firmware event, 0..21 (SBI v3.0 table "PMU firmware events") */
#define FW_ALL                                                                                     \
	"r8000000000000000,r8000000000000001,r8000000000000002,r8000000000000003,"                 \
	"r8000000000000004,r8000000000000005,r8000000000000006,r8000000000000007,"                 \
	"r8000000000000008,r8000000000000009,r800000000000000a,r800000000000000b,"                 \
	"r800000000000000c,r800000000000000d,r800000000000000e,r800000000000000f,"                 \
	"r8000000000000010,r8000000000000011,r8000000000000012,r8000000000000013,"                 \
	"r8000000000000014,r8000000000000015"

/*
 * The script of `make run` (dts/default.dts), also what `make sampling`
 * judges: each recording of the 5M-instruction loop with a period of
 * 100,000 must hold 50 samples, all in the loop (tools/sampling.py). The
 * last one uses perf's default event (cycles, user and kernel).
 */
static const struct step perf_demo[] = {
	{"kernel log: pmu", "kmsg riscv-pmu"},
	{"perf record instructions:u loop-5m", RECORD_5M},
	{"perf report instructions:u loop-5m", REPORT},
	{"perf record cycles:u loop-5m", RECORD_CYC},
	{"perf report cycles:u loop-5m", REPORT},
	{"perf record default loop-5m", RECORD("")},
	{"perf report default loop-5m", REPORT " --sort dso"},
	{"perf stat loop-1m", "/bin/perf stat -e cycles:u,instructions:u /bin/loop-1m"},
	{"perf stat loop-1k", "/bin/perf stat -e instructions:u /bin/loop-1k"},
	{"perf stat fw nsleep", "/bin/perf stat -a -e " FW_EVENTS " /bin/nsleep"},
	{"uptime", "cat /proc/uptime"},
	{NULL, NULL}};

/*
 * Machine-readable variants for tools/check_linux.py: perf stat -x , prints
 * "<count>,,<event>,<time>,<pct>,," per event; perf script -F cpu,ip one
 * "[<cpu>] <raw IP>" per line.
 */
static const struct step perf_check[] = {
	{"perf record instructions:u loop-5m", RECORD_5M},
	{"perf script instructions:u loop-5m", SCRIPT_IP},
	{"perf record cycles:u loop-5m", RECORD_CYC},
	{"perf script cycles:u loop-5m", SCRIPT_IP},
	{"perf record instructions:u loop-5m #2", RECORD_5M},
	{"perf script instructions:u loop-5m #2", SCRIPT_IP},
	{"perf stat loop-100m", "/bin/perf stat -x , -e instructions:u,cycles:u /bin/loop-100m"},
	{"perf stat fw nsleep", "/bin/perf stat -x , -a -e " FW_EVENTS " /bin/nsleep"},
	{"perf record instructions:u true", RECORD_TRUE},
	{"perf report instructions:u true", REPORT " --sort sym"},
	{NULL, "/bin/mkdata /tmp/data 100000"},
	{"perf record default gzip",
	 "/bin/perf record --sample-cpu -o /tmp/perf.data /bin/gzip -k -f /tmp/data"},
	{"perf report default gzip", REPORT " --sort sym"},
	{"perf script default gzip", SCRIPT_SAMPLES},
	{"uptime", "cat /proc/uptime"},
	{NULL, NULL}};

/* Exact counts (one physical hart, icount): no sampling. */
static const struct step perf_exact[] = {
	{"perf stat loop-1k", "/bin/perf stat -x , -e instructions:u,cycles:u /bin/loop-1k"},
	{"perf stat loop-1m", "/bin/perf stat -x , -e instructions:u,cycles:u /bin/loop-1m"},
	{"perf stat loop-5m", "/bin/perf stat -x , -e instructions:u,cycles:u /bin/loop-5m"},
	{"uptime", "cat /proc/uptime"},
	{NULL, NULL}};

/* SBI firmware events of a guest that sleeps on 2 vCPUs. */
static const struct step perf_fw[] = {
	{"perf stat fw nsleep", "/bin/perf stat -x , -a -e " FW_EVENTS " /bin/nsleep"},
	{"perf stat fw22 nsleep", "/bin/perf stat -x , -e " FW_ALL " /bin/nsleep"},
	{"perf stat fw22a nsleep", "/bin/perf stat -x , -a -e " FW_ALL " /bin/nsleep"},
	{"uptime", "cat /proc/uptime"},
	{NULL, NULL}};

/* Sampling repeatability: the same recordings again and again in one boot. */
static const struct step perf_record5[] = {{"perf record instructions:u loop-5m #1", RECORD_5M},
					   {"perf script instructions:u loop-5m #1", SCRIPT_IP},
					   {"perf record cycles:u loop-5m #2", RECORD_CYC},
					   {"perf script cycles:u loop-5m #2", SCRIPT_IP},
					   {"perf record instructions:u loop-5m #3", RECORD_5M},
					   {"perf script instructions:u loop-5m #3", SCRIPT_IP},
					   {"perf record cycles:u loop-5m #4", RECORD_CYC},
					   {"perf script cycles:u loop-5m #4", SCRIPT_IP},
					   {"perf record instructions:u loop-5m #5", RECORD_5M},
					   {"perf script instructions:u loop-5m #5", SCRIPT_IP},
					   {NULL, NULL}};

/*
 * QEMU's mode-filtered counters under icount on -smp > 1: the same 5M loop
 * measured alone, then while another hart runs a 20M loop in the background.
 */
static const struct step perf_busy2[] = {
	{"perf stat loop-5m", "/bin/perf stat -x , -e instructions:u /bin/loop-5m"},
	{"background loop-20m", "bg /bin/loop-20m"},
	{"perf stat loop-5m", "/bin/perf stat -x , -e instructions:u /bin/loop-5m"},
	{"wait", "wait"},
	{NULL, NULL}};

static const struct step boot[] = {
	{"kernel log: pmu/sbi", "kmsg pmu sbi"}, {"uptime", "cat /proc/uptime"}, {NULL, NULL}};

static const struct script scripts[] = {{"perf-demo", perf_demo},
					{"perf-check", perf_check},
					{"perf-exact", perf_exact},
					{"perf-fw", perf_fw},
					{"perf-record5", perf_record5},
					{"perf-busy2", perf_busy2},
					{"boot", boot},
					{NULL, NULL}};

static int split(char *line, char **argv)
{
	int argc = 0;
	char *tok, *save;

	for (tok = strtok_r(line, " \t\n", &save); tok && argc < MAX_ARGS - 1;
	     tok = strtok_r(NULL, " \t\n", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	return argc;
}

static int contains_nocase(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (; *s; s++)
		if (!strncasecmp(s, word, n))
			return 1;
	return 0;
}

/* kmsg WORD...: kernel log records containing any WORD (all when none). */
static int cmd_kmsg(int argc, char **argv)
{
	char rec[2048];
	ssize_t n;
	int fd, i, hit;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		perror("kmsg: /dev/kmsg");
		return 1;
	}
	/* one record per read(); EAGAIN at the end, EPIPE if overwritten */
	while ((n = read(fd, rec, sizeof(rec) - 1)) != 0) {
		char *msg;

		if (n < 0) {
			if (errno == EPIPE)
				continue;
			break;
		}
		rec[n] = '\0';
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		msg[strcspn(msg, "\n")] = '\0';
		for (hit = argc < 2, i = 1; i < argc && !hit; i++)
			hit = contains_nocase(msg, argv[i]);
		if (hit)
			printf("%s\n", msg);
	}
	close(fd);
	return 0;
}

/* cat FILE... / grep WORD FILE...: enough for /proc files. */
static int cmd_cat_grep(int argc, char **argv, const char *word)
{
	char line[LINE_MAX_LEN];
	int i;

	for (i = word ? 2 : 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "r");

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		while (fgets(line, sizeof(line), f))
			if (!word || strstr(line, word))
				fputs(line, stdout);
		fclose(f);
	}
	return 0;
}

static int spawn(char **argv, int background)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (background)
		return 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* wait: reap every background child */
static int cmd_wait(void)
{
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return 0;
}

static int run_line(char *line)
{
	char *argv[MAX_ARGS];
	int argc = split(line, argv);
	int ret;

	if (!argc)
		return 0;
	if (!strcmp(argv[0], "kmsg"))
		ret = cmd_kmsg(argc, argv);
	else if (!strcmp(argv[0], "cat"))
		ret = cmd_cat_grep(argc, argv, NULL);
	else if (!strcmp(argv[0], "grep") && argc > 2)
		ret = cmd_cat_grep(argc, argv, argv[1]);
	else if (!strcmp(argv[0], "bg") && argc > 1)
		ret = spawn(argv + 1, 1);
	else if (!strcmp(argv[0], "wait"))
		ret = cmd_wait();
	else
		ret = spawn(argv, 0);
	fflush(stdout);
	return ret;
}

static void run_script(const struct script *s)
{
	char line[LINE_MAX_LEN];
	const struct step *st;
	int ret;

	for (st = s->steps; st->cmd; st++) {
		if (st->title)
			printf("=== %s ===\n", st->title);
		snprintf(line, sizeof(line), "%s", st->cmd);
		ret = run_line(line);
		if (ret)
			printf("[init] '%s' exited with %d\n", st->cmd, ret);
	}
}

/* BusyBox's poweroff, reboot and halt signal PID 1 (SIGUSR2, SIGTERM, SIGUSR1) */
static void power_off(int sig)
{
	(void)sig;
	sync();
	reboot(RB_POWER_OFF);
}

/*
 * pmuvisor.run=shell: BusyBox sh as a login shell on the console's tty
 * (/sys/class/tty/console/active, e.g. hvc0), which becomes its controlling
 * terminal: job control, and Ctrl-C interrupts the foreground command.
 * /dev/console cannot be one. The guest powers off when the shell exits.
 */
static void shell(void)
{
	char word[32], tty[32] = "hvc0", path[48];
	FILE *f = fopen("/sys/class/tty/console/active", "r");
	int status, fd;
	pid_t pid;

	/* the last console listed is /dev/console's */
	if (f) {
		while (fscanf(f, "%31s", word) == 1)
			memcpy(tty, word, sizeof(tty));
		fclose(f);
	}
	snprintf(path, sizeof(path), "/dev/%s", tty);
	signal(SIGUSR1, power_off);
	signal(SIGUSR2, power_off);
	signal(SIGTERM, power_off);
	printf("pmuvisor shell: BusyBox sh on %s; perf, loop-1m, loop-5m, ... in /bin;"
	       " Ctrl-C stops a command, `exit` or `poweroff` powers the guest off\n",
	       path);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return;
	}
	if (!pid) {
		setsid();
		fd = open(path, O_RDWR);
		if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0) {
			fprintf(stderr, "[init] %s: %s\n", path, strerror(errno));
			_exit(127);
		}
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
		execl("/bin/sh", "-sh", (char *)NULL);
		fprintf(stderr, "[init] /bin/sh: %s\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/*
 * timeit [-q] CMD [ARG...]: run CMD (its stdout to /dev/null with -q) and
 * print "[timeit] <ns> ns, status <n>: CMD", the CLOCK_MONOTONIC time from
 * before the fork to after the wait. Under QEMU -icount shift=0 one
 * nanosecond is one instruction executed by the machine (tools/e2e.py).
 */
static int timeit(int argc, char **argv)
{
	struct timespec t0, t1;
	int quiet = 0, status, fd;
	long long ns;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "-q")) {
		quiet = 1;
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: timeit [-q] CMD [ARG...]\n");
		return 2;
	}
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("timeit: fork");
		return 127;
	}
	if (!pid) {
		fd = quiet ? open("/dev/null", O_WRONLY) : -1;
		if (fd >= 0)
			dup2(fd, 1);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "timeit: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 127;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	printf("[timeit] %lld ns, status %d: %s\n", ns, status, argv[1]);
	return status;
}

/*
 * mkdata FILE BYTES: BYTES of text made of words of a small vocabulary,
 * the rarer the further down the list, and numbers; the same every time
 * (xorshift64 from a fixed seed). gzip compresses it to 27 %.
 */
static int mkdata(int argc, char **argv)
{
	static const char *const words[] = {
		"the",	  "of",	      "counter", "event",  "and",    "guest",	 "to",
		"sample", "in",	      "a",	 "hart",   "perf",   "overflow", "is",
		"vcpu",	  "for",      "period",	 "record", "kernel", "user",	 "mode",
		"trap",	  "handler",  "stop",	 "start",  "config", "snapshot", "shared",
		"memory", "firmware", "call",	 "cycle"};
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	long long left;
	FILE *f;

	if (argc != 3 || atoll(argv[2]) <= 0) {
		fprintf(stderr, "usage: mkdata FILE BYTES\n");
		return 2;
	}
	f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	for (left = atoll(argv[2]); left > 0;) {
		char word[32];
		int n;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* the AND of two uniform indices favours the first words */
		if ((x >> 40) % 8)
			n = snprintf(word, sizeof(word), "%s%c", words[(x & 31) & ((x >> 5) & 31)],
				     (x >> 10) % 12 ? ' ' : '\n');
		else
			n = snprintf(word, sizeof(word), "%u ", (unsigned)(x >> 20) % 100000);
		if (n > left)
			n = (int)left;
		fwrite(word, 1, (size_t)n, f);
		left -= n;
	}
	return fclose(f) ? 1 : 0;
}

/* value of "<key>" (e.g. "pmuvisor.run=") in /proc/cmdline, into buf */
static void cmdline_param(const char *key, const char *def, char *buf, size_t len)
{
	char cmdline[LINE_MAX_LEN], *p, *save;
	FILE *f = fopen("/proc/cmdline", "r");

	snprintf(buf, len, "%s", def);
	if (!f)
		return;
	if (fgets(cmdline, sizeof(cmdline), f)) {
		for (p = strtok_r(cmdline, " \n", &save); p; p = strtok_r(NULL, " \n", &save))
			if (!strncmp(p, key, strlen(key)))
				snprintf(buf, len, "%s", p + strlen(key));
	}
	fclose(f);
}

/*
 * pmuvisor.run=cmds: run the commands given on the kernel command line as
 * pmuvisor.cmd=WORD,WORD,... in order (a comma stands for a space, %XX for
 * the byte of hex XX: "%2C" is a comma), each after "=== cmd <n> ===".
 */
static void run_cmds(void)
{
	char cmdline[LINE_MAX_LEN], line[LINE_MAX_LEN], *p, *save, *o;
	const char *key = "pmuvisor.cmd=";
	FILE *f = fopen("/proc/cmdline", "r");
	int n = 0, ret;

	if (!f || !fgets(cmdline, sizeof(cmdline), f)) {
		printf("[init] cmds: no /proc/cmdline\n");
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	for (p = strtok_r(cmdline, " \n", &save); p; p = strtok_r(NULL, " \n", &save)) {
		if (strncmp(p, key, strlen(key)))
			continue;
		for (p += strlen(key), o = line; *p && o < line + sizeof(line) - 1; p++) {
			if (*p == ',') {
				*o++ = ' ';
			} else if (*p == '%' && isxdigit((unsigned char)p[1]) &&
				   isxdigit((unsigned char)p[2])) {
				char hex[3] = {p[1], p[2], '\0'};

				*o++ = (char)strtol(hex, NULL, 16);
				p += 2;
			} else {
				*o++ = *p;
			}
		}
		*o = '\0';
		printf("=== cmd %d ===\n", ++n);
		ret = run_line(line);
		if (ret)
			printf("[init] cmd %d exited with %d\n", n, ret);
	}
}

static void do_mount(const char *src, const char *dir, const char *type)
{
	mkdir(dir, 0755);
	if (mount(src, dir, type, 0, NULL) && errno != EBUSY)
		fprintf(stderr, "[init] mount %s on %s: %s\n", type, dir, strerror(errno));
}

int main(int argc, char **argv)
{
	const char *self = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	const struct script *s;
	struct timespec ts;
	char name[64], delay[16];

	if (!strcmp(self, "timeit"))
		return timeit(argc, argv);
	if (!strcmp(self, "mkdata"))
		return mkdata(argc, argv);

	do_mount("proc", "/proc", "proc");
	do_mount("sysfs", "/sys", "sysfs");
	do_mount("devtmpfs", "/dev", "devtmpfs");
	do_mount("tmpfs", "/tmp", "tmpfs");
	setenv("PATH", "/bin", 1);
	setenv("HOME", "/tmp", 1);
	/* perf would page its output through BusyBox less on the console: never wanted in
	 * scripts, and a full-screen pager fights the hypervisor's line prefixes */
	setenv("PAGER", "cat", 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	dup2(1, 2);

	clock_gettime(CLOCK_MONOTONIC, &ts);
	cmdline_param("pmuvisor.run=", "perf-demo", name, sizeof(name));
	printf("[init] pmuvisor.run=%s, started at %ld.%09ld s monotonic\n", name, (long)ts.tv_sec,
	       ts.tv_nsec);
	/* pmuvisor.delay=MS: sleep first (staggers guests that share harts) */
	cmdline_param("pmuvisor.delay=", "0", delay, sizeof(delay));
	if (atol(delay) > 0) {
		struct timespec d = {atol(delay) / 1000, (atol(delay) % 1000) * 1000000L};

		printf("[init] sleeping %ld ms (pmuvisor.delay)\n", atol(delay));
		while (nanosleep(&d, &d) && errno == EINTR)
			;
	}
	if (!strcmp(name, "shell")) {
		shell();
	} else {
		for (s = scripts; s->name && strcmp(s->name, name); s++)
			;
		if (s->name)
			run_script(s);
		else if (!strcmp(name, "cmds"))
			run_cmds();
		else
			printf("[init] unknown script '%s'\n", name);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("=== done === (%ld.%09ld s monotonic)\n", (long)ts.tv_sec, ts.tv_nsec);
	}
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}

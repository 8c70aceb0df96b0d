/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged: assemble multi-device btrfs, RAM areas and deferred fstab
 * entries at boot.  See storaged(8).
 */
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "parse/config.h"
#include "shared/invocation.h"
#include "shared/util.h"
#include "world/world.h"

enum {
	OPT_JSON = 0x100,
	OPT_FOREGROUND,
	OPT_DAEMON,
	OPT_STATE_DIR,
	OPT_LOCAL,
	OPT_VERSION,
	OPT_FORMAT,
	OPT_NOHEADINGS,
};

/* The options that change what a command does; one a command would
 * ignore is a usage error.  -c, -f, --state-dir, -v and -q are for all. */
enum {
	TAKES_JSON = 1 << 0,
	TAKES_DRY_RUN = 1 << 1, /* stop and sync refuse it with their own advice */
	TAKES_LOCAL = 1 << 2,
	TAKES_RESIDENT = 1 << 3, /* --foreground, --daemon */
	TAKES_FORMAT = 1 << 4,
	TAKES_TABLE = 1 << 5, /* -o, --raw, --noheadings */
};

struct command {
	const char *name;
	int (*run)(const struct options *o, const struct logger *lg);
	int min_args, max_args; /* operands after the command */
	unsigned takes; /* TAKES_* */
};

static const struct command commands[] = {
	{ "start", cmd_start, 0, 0, TAKES_JSON | TAKES_DRY_RUN | TAKES_LOCAL | TAKES_RESIDENT },
	{ "stop", cmd_stop, 0, 0, TAKES_DRY_RUN },
	{ "scan", cmd_scan, 0, 0, TAKES_JSON | TAKES_TABLE },
	{ "status", cmd_status, 0, 0, TAKES_JSON | TAKES_FORMAT | TAKES_TABLE },
	{ "check", cmd_check, 0, 0, TAKES_LOCAL },
	{ "cat-config", cmd_cat_config, 0, 0, 0 },
	{ "sync", cmd_sync, 0, 1, TAKES_DRY_RUN },
	/* systemd runs generators with three directories; the first is used */
	{ "systemd-generator", cmd_systemd_generator, 1, 3, 0 },
};

static void usage(FILE *out)
{
	fputs("Usage: storaged [options] [start|stop|scan|status|check|cat-config|sync [NAME]]\n"
	      "       storaged [options] systemd-generator DIR [DIR DIR]\n"
	      "\n"
	      "Assemble multi-device btrfs, set up RAM areas and mount deferred fstab\n"
	      "entries in dependency order.\n"
	      "\n"
	      "Commands:\n"
	      "  start          assemble devices, areas and mounts (default)\n"
	      "  stop           undo what storaged did, in reverse order\n"
	      "  scan           list btrfs filesystems: members present/expected\n"
	      "  status         what storaged set up, checked against the live system\n"
	      "  check          validate config and fstab, print every problem and\n"
	      "                 every step that will fail\n"
	      "  cat-config     print the configuration files in effect, each named\n"
	      "  sync [NAME]    copy the RAM area NAME (default: every persist area) back\n"
	      "                 into its directory\n"
	      "  systemd-generator DIR\n"
	      "                 write systemd drop-ins that stop storaged before the\n"
	      "                 mounts of its RAM areas (run by systemd at boot)\n"
	      "\n"
	      "Options:\n"
	      "  -c, --config FILE     configuration (default " CONFIG_DEFAULT_PATH ")\n"
	      "  -f, --fstab FILE      fstab to read (default: from config, else /etc/fstab)\n"
	      "  -n, --dry-run         print the plan and change nothing\n"
	      "      --json            machine-readable output for plan, scan and status\n"
	      "      --foreground      stay resident for devices that appear later\n"
	      "      --daemon          the same, detached after the first pass\n"
	      "      --state-dir DIR   state directory (default " STATE_DIR_DEFAULT ")\n"
	      "      --local           start: leave network filesystems (and what needs\n"
	      "                        them) for a later start, after the network is up\n"
	      "      --format=prometheus\n"
	      "                        status: the Prometheus text exposition format\n"
	      "  -o, --output LIST     status, scan: the columns to print, comma-separated\n"
	      "                        (+LIST: the default ones and LIST; see below)\n"
	      "  -r, --raw             status, scan: raw table, blanks escaped (\\x20)\n"
	      "      --noheadings      status, scan: no heading line\n"
	      "  -v, --verbose         more messages\n"
	      "  -q, --quiet           errors only\n"
	      "  -V, --version         print the version\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "Exit status (every command, see storaged(8)): 0 all done; 1 some step failed,\n"
	      "is not as storaged left it, or (check, --dry-run) will fail; 2 usage or\n"
	      "configuration error; 3 all done, but some btrfs is mounted degraded (status:\n"
	      "or an area is degraded); 4 the state directory cannot be used.\n",
	      out);
	report_columns_usage(out);
}

/* The first option in @o that @cmd would ignore, or NULL. */
static const char *ignored_option(const struct command *cmd, const struct options *o)
{
	const struct {
		bool given;
		unsigned needs;
		const char *name;
	} opts[] = {
		{ o->json, TAKES_JSON, "--json" },
		{ o->dry_run, TAKES_DRY_RUN, "--dry-run" },
		{ o->local_only, TAKES_LOCAL, "--local" },
		{ o->foreground, TAKES_RESIDENT, "--foreground" },
		{ o->daemonize, TAKES_RESIDENT, "--daemon" },
		{ o->prometheus, TAKES_FORMAT, "--format=prometheus" },
		{ o->output, TAKES_TABLE, "-o/--output" },
		{ o->raw, TAKES_TABLE, "--raw" },
		{ o->noheadings, TAKES_TABLE, "--noheadings" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (opts[i].given && !(cmd->takes & opts[i].needs))
			return opts[i].name;
	return NULL;
}

/* @self: the command advice names (invocation_format()).  Returns: -1
 * when @o makes sense for @cmd, else EXIT_CONFIG (said why). */
static int check_options(const struct command *cmd, const struct options *o, const char *self,
			 const struct logger *lg)
{
	const char *ignored = ignored_option(cmd, o);

	if (ignored) {
		log_usage_error(lg, cmd->name, "%s does nothing for this command; see 'storaged --help'", ignored);
		return EXIT_CONFIG;
	}
	/* start's own messages are its output; --json is the plan's */
	if (o->json && !o->dry_run && cmd->run == cmd_start) {
		log_usage_error(lg, cmd->name, "--json is for the plan (--dry-run); what start did is in `%s status --json`",
				self);
		return EXIT_CONFIG;
	}
	if (o->json && o->prometheus) {
		log_usage_error(lg, cmd->name, "--json and --format=prometheus are two formats; give one");
		return EXIT_CONFIG;
	}
	/* --json chooses columns with -o, as lsblk does, but has no
	 * headings and is not raw; prometheus has no table at all */
	if ((o->json || o->prometheus) && (o->raw || o->noheadings || (o->prometheus && o->output))) {
		log_usage_error(lg, cmd->name, "%s is for the table; %s has none",
				o->raw ? "--raw" : o->noheadings ? "--noheadings" : "-o/--output",
				o->json ? "--json" : "--format=prometheus");
		return EXIT_CONFIG;
	}
	/* a fixture stands in for the live system in a plan; what start or
	 * sync do, they do to the live one (stop reads none of them) */
	if (!o->dry_run && (cmd->run == cmd_start || cmd->run == cmd_sync) && sources_fixture_set()) {
		log_usage_error(lg, cmd->name,
				"%s is set: it puts a test's file in place of the system's for --dry-run, check, scan and status; %s would act on the live system as that file shows it: unset it",
				sources_fixture_set(), cmd->name);
		return EXIT_CONFIG;
	}
	if (o->dry_run && (o->foreground || o->daemonize)) {
		log_usage_error(lg, cmd->name, "--dry-run prints the plan and returns; it does not stay resident (%s)",
				o->foreground ? "--foreground" : "--daemon");
		return EXIT_CONFIG;
	}
	return -1;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Returns: -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, struct options *o, int *level, const struct logger *lg)
{
	static const struct option longopts[] = { { "config", required_argument, NULL, 'c' },
						  { "fstab", required_argument, NULL, 'f' },
						  { "dry-run", no_argument, NULL, 'n' },
						  { "json", no_argument, NULL, OPT_JSON },
						  { "foreground", no_argument, NULL, OPT_FOREGROUND },
						  { "daemon", no_argument, NULL, OPT_DAEMON },
						  { "state-dir", required_argument, NULL, OPT_STATE_DIR },
						  { "local", no_argument, NULL, OPT_LOCAL },
						  { "verbose", no_argument, NULL, 'v' },
						  { "quiet", no_argument, NULL, 'q' },
						  { "version", no_argument, NULL, OPT_VERSION },
						  { "help", no_argument, NULL, 'h' },
						  { "format", required_argument, NULL, OPT_FORMAT },
						  { "output", required_argument, NULL, 'o' },
						  { "raw", no_argument, NULL, 'r' },
						  { "noheadings", no_argument, NULL, OPT_NOHEADINGS },
						  {} };
	int c;

	while ((c = getopt_long(argc, argv, "c:f:nvqVho:r", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config_path = optarg;
			o->config_given = true;
			break;
		case 'f':
			o->fstab_path = optarg;
			break;
		case 'n':
			o->dry_run = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_FOREGROUND:
			o->foreground = true;
			break;
		case OPT_DAEMON:
			o->daemonize = true;
			break;
		case OPT_STATE_DIR:
			o->state_dir = optarg;
			/* the default named by hand (a unit file) is still the default */
			o->state_dir_given = strcmp(optarg, STATE_DIR_DEFAULT) != 0;
			break;
		case OPT_LOCAL:
			o->local_only = true;
			break;
		case 'v':
			*level = LOG_DEBUG;
			break;
		case 'q':
			*level = LOG_ERR;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'r':
			o->raw = true;
			break;
		case OPT_NOHEADINGS:
			o->noheadings = true;
			break;
		case 'V':
		case OPT_VERSION:
			puts(PACKAGE_STRING);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_FORMAT: /* the one format besides table and --json */
			if (strcmp(optarg, "prometheus") != 0) {
				log_usage_error(lg, NULL, "--format '%s': only 'prometheus' is known", optarg);
				return EXIT_CONFIG;
			}
			o->prometheus = true;
			break;
		default:
			fputs("Try 'storaged --help' for more information.\n", stderr);
			return EXIT_CONFIG;
		}
	}
	return -1;
}

/* One rule for -c, -f and --state-dir: a relative path is taken against
 * the working directory (a relative --state-dir was refused).  -c and -f
 * stay as given, so that their FILE:LINE messages read as the user typed
 * them; the resident storaged, which changes to /, makes them absolute
 * (cmd_start.c) and the advice names them absolute (invocation.h).  The
 * state directory is made absolute here: every command, the resident and
 * the children of a start use it.  @ret_abs: the string made, owned by
 * the caller.  Returns: -1 to go on; an exit status. */
static int state_dir_absolute(struct options *o, char **ret_abs, const struct logger *lg)
{
	if (!o->state_dir[0] || o->state_dir[0] == '/')
		return -1;
	*ret_abs = path_absolute(o->state_dir);
	if (!*ret_abs) {
		log_usage_error(lg, o->command, "--state-dir '%s': cannot make it absolute: %s", o->state_dir,
				strerror(errno));
		return EXIT_CONFIG;
	}
	o->state_dir = *ret_abs;
	o->state_dir_given = strcmp(o->state_dir, STATE_DIR_DEFAULT) != 0;
	return -1;
}

int main(int argc, char **argv)
{
	struct options o = { .config_path = CONFIG_DEFAULT_PATH, .state_dir = STATE_DIR_DEFAULT };
	_cleanup_free_ char *self = NULL, *state_abs = NULL;
	const struct command *cmd;
	struct logger lg = { 0 };
	int level = LOG_INFO, r;

	/* the usage errors' logger (log_usage_error()); -q and -v set its
	 * level once the options are read */
	log_init(&lg, level, LOG_TARGET_STDERR);
	r = parse_options(argc, argv, &o, &level, &lg);
	if (r >= 0)
		return r;
	lg.max_level = level;
	o.command = optind < argc ? argv[optind++] : "start";
	/* libsmartcols prints non-ASCII text (a label, "…") only in a UTF-8
	 * locale, and escapes it otherwise.  A real start prints no table and
	 * may stay resident: it does without the locale's tables (memory). */
	if (strcmp(o.command, "start") != 0 || o.dry_run)
		setlocale(LC_ALL, "");
	cmd = find_command(o.command);
	if (!cmd) {
		log_usage_error(&lg, NULL, "unknown command '%s'; try 'storaged --help'", o.command);
		return EXIT_CONFIG;
	}
	if (argc - optind < cmd->min_args || argc - optind > cmd->max_args) {
		log_usage_error(&lg, o.command, "%s; try 'storaged --help'",
				argc - optind < cmd->min_args ? "missing argument" : "too many arguments");
		return EXIT_CONFIG;
	}
	o.arg = optind < argc ? argv[optind] : NULL;
	r = state_dir_absolute(&o, &state_abs, &lg);
	if (r >= 0)
		return r;
	/* NULL (no memory, no working directory for a relative path): the
	 * advice names plain "storaged" (log_self()), the command still runs */
	self = invocation_format(o.config_given ? o.config_path : NULL, o.fstab_path,
				 o.state_dir_given ? o.state_dir : NULL);
	r = check_options(cmd, &o, self ? self : "storaged", &lg);
	if (r >= 0)
		return r;
	lg.self = self;
	r = cmd->run(&o, &lg);
	log_close(&lg);
	return r;
}

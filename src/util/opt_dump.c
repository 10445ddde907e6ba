/* opt_dump.c - an option table as JSON: what `gpuwhy help --dump` prints, read
 * by scripts/gen-man and scripts/gen-completion so that the man pages and the
 * shell completion never re-type an option the parser knows. */
#include <stdlib.h>
#include <string.h>

#include "util/jsonw.h"
#include "util/opt.h"

static bool dump_mode;

void opt_set_dump(bool on)
{
	dump_mode = on;
}

bool opt_dump_on(void)
{
	return dump_mode;
}

static const char *kind_name(opt_kind k)
{
	switch (k) {
	case OPTK_FLAG:
		return "flag";
	case OPTK_COUNT:
		return "count";
	case OPTK_INT:
	case OPTK_INT64:
		return "int";
	case OPTK_DOUBLE:
		return "number";
	case OPTK_DURATION:
		return "duration";
	case OPTK_SIZE:
		return "size";
	case OPTK_STRING:
		return "string";
	case OPTK_ENUM:
		return "enum";
	case OPTK_LIST:
		return "list";
	case OPTK_CALL:
		return "call";
	case OPTK_GROUP:
		return "group";
	case OPTK_END:
		break;
	}
	return "end";
}

/* Whether the option is given a value ("--name VALUE"): the completion then
 * completes the value, not the next option. */
static bool takes_value(const opt_def *o)
{
	return o->kind != OPTK_FLAG && o->kind != OPTK_COUNT && o->kind != OPTK_GROUP &&
	       !(o->kind == OPTK_CALL && !o->arg);
}

static void dump_opt(jsonw *w, const opt_def *o)
{
	char s[2] = {(char)o->shrt, 0};
	jsonw_obj_begin(w);
	jsonw_key(w, "kind");
	jsonw_str(w, kind_name(o->kind));
	if (o->kind != OPTK_GROUP) {
		jsonw_key(w, "long");
		jsonw_str(w, o->name);
		jsonw_key(w, "short");
		jsonw_str(w, o->shrt ? s : NULL);
		jsonw_key(w, "arg");
		jsonw_str(w, o->arg);
		jsonw_key(w, "value");
		jsonw_bool(w, takes_value(o));
		jsonw_key(w, "optional");
		jsonw_bool(w, o->optional);
		jsonw_key(w, "hidden");
		jsonw_bool(w, o->hidden);
	}
	if (o->choices) {
		jsonw_key(w, "choices");
		jsonw_arr_begin(w);
		for (const char *const *c = o->choices; *c; c++)
			jsonw_str(w, *c);
		jsonw_arr_end(w);
	}
	jsonw_key(w, "help");
	jsonw_str(w, o->help ? _(o->help) : "");
	jsonw_obj_end(w);
}

static void dump_opts(jsonw *w, const opt_cmd *c)
{
	bool any_short = false;
	for (const opt_def *o = c->opts; o->kind; o++)
		any_short |= o->shrt != 0 && !o->hidden;
	jsonw_key(w, "options");
	jsonw_arr_begin(w);
	for (const opt_def *o = c->opts; o->kind; o++)
		dump_opt(w, o);
	/* The --help the parser adds, as opt_help shows it. */
	if (!opt_has_help(c))
		dump_opt(w, &(opt_def){.name = "help",
		                       .shrt = any_short ? 'h' : 0,
		                       .kind = OPTK_FLAG,
		                       .help = N_("this help")});
	jsonw_arr_end(w);
}

static void dump_subs(jsonw *w, const opt_cmd *c)
{
	jsonw_key(w, "subcommands");
	jsonw_arr_begin(w);
	for (size_t i = 0; c->subs && c->subs[i]; i++) {
		jsonw_obj_begin(w);
		jsonw_key(w, "name");
		jsonw_str(w, c->subs[i]);
		jsonw_key(w, "summary");
		jsonw_str(w,
		          c->sub_summaries && c->sub_summaries[i] ? _(c->sub_summaries[i]) : NULL);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
}

/* What more_fn prints (known only at run time: top's keys, the queue's settings). */
static void dump_more_fn(jsonw *w, const opt_cmd *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = c->more_fn ? open_memstream(&text, &len) : NULL;
	if (m) {
		c->more_fn(m);
		fclose(m);
	}
	jsonw_key(w, "more_run");
	jsonw_str(w, text);
	free(text);
}

void opt_dump(const opt_cmd *c, FILE *out)
{
	jsonw w;
	jsonw_init(&w, out, true);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "name");
	jsonw_str(&w, c->name);
	jsonw_key(&w, "usage");
	jsonw_arr_begin(&w);
	for (const char *u = c->usage; *u;) {
		size_t l = strcspn(u, "\n");
		char *line = strndup(u, l);
		jsonw_str(&w, line);
		free(line);
		u += l + (u[l] == '\n');
	}
	jsonw_arr_end(&w);
	jsonw_key(&w, "about");
	jsonw_str(&w, c->about ? _(c->about) : NULL);
	dump_opts(&w, c);
	jsonw_key(&w, "more");
	jsonw_str(&w, c->more ? _(c->more) : NULL);
	dump_more_fn(&w, c);
	char codes[1024];
	opt_exit_text(c, codes, sizeof codes);
	jsonw_key(&w, "exit_codes");
	jsonw_str(&w, codes);
	jsonw_key(&w, "min_args");
	jsonw_int(&w, c->min_args);
	jsonw_key(&w, "max_args");
	jsonw_int(&w, c->max_args);
	jsonw_key(&w, "long_only");
	jsonw_bool(&w, c->long_only);
	jsonw_key(&w, "stop_at_arg");
	jsonw_bool(&w, c->stop_at_arg);
	dump_subs(&w, c);
	jsonw_obj_end(&w);
	fputc('\n', out);
	fflush(out);
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topview.h: wallprof top's full screen (topview.c), as its command
 * (top.c) starts and feeds it: the command's state it reads, and its
 * calls.  The rows it shows are the monitor's (monitor.h).
 */
#ifndef WALLPROF_TOPVIEW_H
#define WALLPROF_TOPVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "builtin.h"
#include "monitor.h"

struct top_view;

struct top {
	double delay, keep;
	bool batch, json;
	uint64_t count, shown;
	const char *output;
	bool output_given;
	struct wp_monitor *mon;
	struct top_view *view;
	volatile bool quit;		/* the view's thread is to end */
	volatile bool quit_key;		/* q was pressed */
	void (*stop)(void);		/* asks the recording to stop, from any thread */
};

/* The full screen: set up the terminal and its thread; 0 or -errno (said why). */
int top_view_start(struct top *t, enum wp_color_mode color);

/* An interval to show (on the monitor's thread): 0, or 1 once q was pressed. */
int top_view_interval(struct top *t, const struct wp_mon_snapshot *s);

/* The s key's file was written (on the monitor's thread): say its name. */
void top_view_saved(struct top *t, const char *name);

/* Stop the thread and give the terminal back as it was. */
void top_view_end(struct top *t);

#endif

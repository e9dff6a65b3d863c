/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_STIR_H
#define MEMWATCHD_STIR_H

struct bpf_shared_maps;

/* The ring buffer BPF programs write into to wake the main loop while a
 * window goes on (bpf/stir.bpf.h): made once, shared by name with every
 * object that includes stir.bpf.h, so one descriptor serves them all. */
struct stir;

/* Creates the map and registers it in shared. NULL on failure (logged):
 * the programs then keep a map of their own that nobody reads, and the
 * daemon checks at each window length instead (collector_ops.watch).
 * Objects join it with bpf_shared_map_join before load. */
struct stir *stir_new(struct bpf_shared_maps *shared);
void stir_free(struct stir *s);
/* Readable when a program stirred; -1 without a stir. */
int stir_fd(const struct stir *s);
/* Empties it, so that it turns readable again only on the next record. */
void stir_drain(struct stir *s);

#endif

/*
** report_json.c: the report model as JSON, for tools (report.h names every
** field).  Top level:
**
**   format        "bitgate-report", format_version 1
**   run           {id, status, provenance {runs column: value}}, baseline id or null
**   totals        {pass, fail, skipped, seconds}
**   summary       {by_op, by_op_lane, by_group}: [{op, family?, lane?, pass, fail, skipped}]
**   entries       every case x lane: {case_id, op, family, lane, status, outcome,
**                 steps, seconds, nondeterministic, failure?}
**   ulp_histograms [{op, total, buckets: [{label, lo, count}]}] (occupied buckets only)
**   stages        [{stage (null: not localised), count}]
**   regressions   {newly_failing|newly_passing|newly_nondeterministic: [{case_id, lane, baseline, now}]}
**   bench         a bench run's lines: [{kernel, shape, timing, fast_us, fast_min_us, reference_us,
**                 reference_min_us (null: not measured), target, verdict, why_short (null: none),
**                 fast_history_us (oldest first, this run's last)}]; [] for other runs
*/
#include "reports/report.h"

#include "reports/report_escape.h"

static void json_key(FILE *out, const char *key) {
  report_put_json(out, key);
  fputc(':', out);
}

static void json_tallies(FILE *out, const char *name, const report_tally *t, int n, int family, int lane) {
  json_key(out, name);
  fputc('[', out);
  for (int i = 0; i < n; i++) {
    fputs(i ? ",\n{" : "\n{", out);
    json_key(out, "op"), report_put_json(out, t[i].op);
    if (family) fputc(',', out), json_key(out, "family"), report_put_json(out, t[i].family);
    if (lane) fputc(',', out), json_key(out, "lane"), report_put_json(out, t[i].lane);
    fprintf(out, ",\"pass\":%lld,\"fail\":%lld,\"skipped\":%lld}", t[i].count[0], t[i].count[1], t[i].count[2]);
  }
  fputc(']', out);
}

static void json_failure(FILE *out, const report_entry *e) {
  fprintf(out, ",\"failure\":{\"step\":%d,\"stage\":", e->step);
  report_put_json(out, *e->stage ? e->stage : NULL);
  fputs(",\"mismatch\":", out);
  if (e->has_mismatch) {
    fputs("{\"tensor\":", out), report_put_json(out, e->tensor);
    fprintf(out, ",\"flat_offset\":%lld,\"coords\":", e->flat_offset), report_put_json(out, e->coords);
    fputs(",\"expected_hex\":", out), report_put_json(out, e->expected_hex);
    fputs(",\"actual_hex\":", out), report_put_json(out, e->actual_hex);
    if (e->ulp >= 0) fprintf(out, ",\"ulp\":%lld", e->ulp);
    else fputs(",\"ulp\":null", out);
    fprintf(out, ",\"mismatch_count\":%lld}", e->mismatch_count);
  } else {
    fputs("null", out);
  }
  fputs(",\"message\":", out), report_put_json(out, e->message);
  fputs(",\"repro\":", out), report_put_json(out, e->repro);
  fputc('}', out);
}

static void json_entries(FILE *out, const report *r) {
  fputs(",\n\"entries\":[", out);
  for (int i = 0; i < r->entry_count; i++) {
    const report_entry *e = &r->entries[i];
    fputs(i ? ",\n{" : "\n{", out);
    json_key(out, "case_id"), report_put_json(out, e->case_id);
    fputs(",\"op\":", out), report_put_json(out, e->op);
    fputs(",\"family\":", out), report_put_json(out, e->family);
    fputs(",\"lane\":", out), report_put_json(out, e->lane);
    fputs(",\"status\":", out), report_put_json(out, e->status);
    fprintf(out, ",\"outcome\":\"%s\",\"steps\":%d,\"seconds\":%.6f,\"nondeterministic\":%s",
            report_outcome_name(e->outcome), e->steps, e->seconds, e->nondeterministic ? "true" : "false");
    if (e->outcome == REPORT_OUTCOME_FAIL) json_failure(out, e);
    fputc('}', out);
  }
  fputc(']', out);
}

static void json_charts(FILE *out, const report *r) {
  char label[32];
  fputs(",\n\"ulp_histograms\":[", out);
  for (int h = 0; h < r->histogram_count; h++) {
    int first = 1;
    fputs(h ? ",{" : "{", out);
    json_key(out, "op"), report_put_json(out, r->histograms[h].op);
    fprintf(out, ",\"total\":%lld,\"buckets\":[", r->histograms[h].total);
    for (int b = 0; b < REPORT_ULP_BUCKETS; b++) {
      if (!r->histograms[h].bucket[b]) continue;
      report_ulp_bucket_label(b, label, sizeof label);
      fprintf(out, "%s{\"label\":\"%s\",\"lo\":%llu,\"count\":%lld}", first ? "" : ",", label,
              b ? 1ULL << (b - 1) : 0ULL, r->histograms[h].bucket[b]);
      first = 0;
    }
    fputs("]}", out);
  }
  fputs("],\n\"stages\":[", out);
  for (int i = 0; i < r->stage_count; i++) {
    fputs(i ? ",{\"stage\":" : "{\"stage\":", out);
    report_put_json(out, *r->stages[i].stage ? r->stages[i].stage : NULL);
    fprintf(out, ",\"count\":%lld}", r->stages[i].count);
  }
  fputc(']', out);
}

static void json_regressions(FILE *out, const report *r) {
  fputs(",\n\"regressions\":", out);
  if (!r->baseline_id) {
    fputs("null", out);
    return;
  }
  for (int c = 0; c < REPORT_CHANGE_COUNT; c++) {
    int first = 1;
    fputs(c ? "],\n" : "{\n", out);
    json_key(out, report_change_name((report_change)c));
    fputc('[', out);
    for (int i = 0; i < r->regression_count; i++) {
      const report_regression *g = &r->regressions[i];
      if (g->change != (report_change)c) continue;
      fputs(first ? "{\"case_id\":" : ",{\"case_id\":", out), first = 0;
      report_put_json(out, g->entry->case_id);
      fputs(",\"lane\":", out), report_put_json(out, g->entry->lane);
      fputs(",\"baseline\":", out), report_put_json(out, g->baseline_status);
      fputs(",\"now\":", out), report_put_json(out, g->entry->status);
      fputc('}', out);
    }
  }
  fputs("]}", out);
}

/* A median or null. */
static void json_us(FILE *out, const char *key, int have, double us) {
  fputc(',', out), json_key(out, key);
  if (have) fprintf(out, "%.3f", us);
  else fputs("null", out);
}

static void json_bench(FILE *out, const report *r) {
  fputs(",\n\"bench\":[", out);
  for (int i = 0; i < r->bench_count; i++) {
    const report_bench_line *l = &r->bench[i];
    fputs(i ? ",\n{" : "\n{", out);
    json_key(out, "kernel"), report_put_json(out, l->kernel);
    fputc(',', out), json_key(out, "shape"), report_put_json(out, l->shape);
    fputc(',', out), json_key(out, "timing"), report_put_json(out, l->timing);
    json_us(out, "fast_us", l->have_fast, l->fast_us);
    json_us(out, "fast_min_us", l->have_fast, l->fast_min_us);
    json_us(out, "reference_us", l->have_ref, l->ref_us);
    json_us(out, "reference_min_us", l->have_ref, l->ref_min_us);
    fputc(',', out), json_key(out, "target"), report_put_json(out, *l->goal ? l->goal : NULL);
    fputc(',', out), json_key(out, "verdict"), report_put_json(out, *l->status ? l->status : NULL);
    fputc(',', out), json_key(out, "why_short"), report_put_json(out, *l->why ? l->why : NULL);
    fputs(",\"fast_history_us\":[", out);
    for (int h = 0; h < l->history_count; h++) fprintf(out, "%s%.3f", h ? "," : "", l->history[h]);
    fputs("]}", out);
  }
  fputc(']', out);
}

int report_json_write(const report *r, FILE *out) {
  fprintf(out, "{\"format\":\"bitgate-report\",\"format_version\":1,\n\"run\":{\"id\":%lld,\"status\":", r->run_id);
  report_put_json(out, r->run_status);
  fputs(",\"database\":", out), report_put_json(out, r->db_path);
  fputs(",\"provenance\":{", out);
  for (int i = 0; i < r->field_count; i++) {
    if (i) fputc(',', out);
    json_key(out, r->fields[i].name), report_put_json(out, r->fields[i].value);
  }
  fputs("}},\n\"baseline\":", out);
  if (r->baseline_id) fprintf(out, "%lld", r->baseline_id);
  else fputs("null", out);
  fprintf(out, ",\n\"totals\":{\"pass\":%lld,\"fail\":%lld,\"skipped\":%lld,\"seconds\":%.6f},\n\"summary\":{",
          r->totals[0], r->totals[1], r->totals[2], r->seconds);
  json_tallies(out, "by_op", r->by_op, r->by_op_count, 0, 0);
  fputc(',', out);
  json_tallies(out, "by_op_lane", r->by_op_lane, r->by_op_lane_count, 0, 1);
  fputc(',', out);
  json_tallies(out, "by_group", r->by_group, r->by_group_count, 1, 1);
  fputc('}', out);
  json_entries(out, r);
  json_charts(out, r);
  json_regressions(out, r);
  json_bench(out, r);
  fputs("}\n", out);
  return ferror(out) ? -1 : 0;
}

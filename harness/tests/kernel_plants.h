/*
** kernel_plants.h: the kernel bugs the GPU tests plant (BITGATE_PLANT,
** "FILE:OLD=>NEW"), in one place so that test_kernel_plants can check on a
** machine without a GPU that each OLD still occurs, exactly once, in the
** embedded kernel it names.  A kernel rewrite that drops a plant's text
** otherwise shows only on a GPU, as a test that fails at apply time (this
** happened to PLANT_IS_PRESENT when the present builds were rewritten).
*/
#ifndef HARNESS_TESTS_KERNEL_PLANTS_H
#define HARNESS_TESTS_KERNEL_PLANTS_H

/* test_localise.c */
#define PLANT_CSA4_SCORING "csa4.cu:nx_maxf(acc[j], 0.0f)=>nx_maxf(acc[j], 0.015625f)"
#define PLANT_CSA4_LATE_SCORING \
  "csa4.cu:r < limit ? score : csa_neg_inf()=>r < limit ? (r == 9 ? score + 1.0f : score) : csa_neg_inf()"
#define PLANT_CSA4_QUERY "csa4.cu:q[d] = nx_bf16_round(src[d]);=>q[d] = nx_bf16_round(src[d] * 1.5f);"
/* the top-k's slots reversed: ascending instead of descending (csa4_select.h's rank step) */
#define PLANT_CSA4_SELECTION "csa4_select.h:out[above] = =>out[k - 1 - above] = "
/* the one-chain scores tile's (csa_attention_tiles.h), which these tests' few-row steps take */
#define PLANT_CSA_CANDIDATE_SCORE "csa_attention_tiles.h:score = acc * r.scale;=>score = acc * r.scale * 1.25f;"
#define PLANT_CSA128_COMPRESSOR \
  "csa128.cu:nx_csa_square_sum(record, CSA128_DIM_K)=>nx_csa_square_sum(record, CSA128_DIM_K - 1)"

/* test_index_share_stages.c; the present one copies the current rows' channels in reverse */
#define PLANT_IS_PRESENT "index_share.cu:(w.within - past_n), storage)=>(row - 1 - w.within), storage)"
#define PLANT_IS_SCORE "index_share_row_scores.h:acc = acc + (is_load(query=>acc = acc - (is_load(query"
#define PLANT_IS_NORMALISATION "index_share_row_scores.h:inv_sum = 1.0f / sum=>inv_sum = 0.5f / sum"
#define PLANT_IS_VALUE_SUM "index_share_row_values.h:acc = acc + srow_p[s]=>acc = acc - srow_p[s]"

/* test_worker_gpu.c: the index query's store, made to fault or to hang */
#define PLANT_QUERY_STORE "dst[d] = nx_csa_fp4_record_value(packed, d);"
#define PLANT_CSA4_FAULT "csa4.cu:" PLANT_QUERY_STORE "=>dst[d + (1LL << 40)] = nx_csa_fp4_record_value(packed, d);"
#define PLANT_CSA4_HANG "csa4.cu:" PLANT_QUERY_STORE "=>for (;;) " PLANT_QUERY_STORE

#define KERNEL_PLANTS                                                                                       \
  PLANT_CSA4_SCORING, PLANT_CSA4_LATE_SCORING, PLANT_CSA4_QUERY, PLANT_CSA4_SELECTION,                     \
      PLANT_CSA_CANDIDATE_SCORE,                                                                            \
      PLANT_CSA128_COMPRESSOR, PLANT_IS_PRESENT, PLANT_IS_SCORE, PLANT_IS_NORMALISATION, PLANT_IS_VALUE_SUM, \
      PLANT_CSA4_FAULT, PLANT_CSA4_HANG

#endif

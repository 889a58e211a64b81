/* Hand-written reference for benchmarks/roofline.py: sum(softmax(x, axis=-1) * w)
 * over an n x m float32 matrix, and its value and gradient (dx, dw), one row per
 * iteration of an OpenMP loop; each row is read from memory once (it stays in
 * cache for the second pass). Compiled with gcc -O3 -march=native -ffast-math -fopenmp. */
#include <math.h>
#include <stddef.h>

static float row_softmax_dot(const float *x, const float *w, long m, float *max_out, float *sum_out) {
    float mx = -INFINITY;
    for (long j = 0; j < m; j++) mx = x[j] > mx ? x[j] : mx;
    float s = 0.0f, d = 0.0f;
    for (long j = 0; j < m; j++) {
        float e = expf(x[j] - mx);
        s += e;
        d += e * w[j];
    }
    *max_out = mx;
    *sum_out = s;
    return d / s;
}

float softmax_loss(const float *x, const float *w, long n, long m) {
    double total = 0.0;
#pragma omp parallel for reduction(+ : total) schedule(static)
    for (long i = 0; i < n; i++) {
        float mx, s;
        total += row_softmax_dot(x + i * m, w + i * m, m, &mx, &s);
    }
    return (float)total;
}

float softmax_loss_grad(const float *x, const float *w, long n, long m, float seed, float *dx, float *dw) {
    double total = 0.0;
#pragma omp parallel for reduction(+ : total) schedule(static)
    for (long i = 0; i < n; i++) {
        const float *xr = x + i * m, *wr = w + i * m;
        float mx, s;
        float dot = row_softmax_dot(xr, wr, m, &mx, &s);
        total += dot;
        float inv = 1.0f / s;
        for (long j = 0; j < m; j++) {
            float p = expf(xr[j] - mx) * inv;
            dw[i * m + j] = seed * p;
            dx[i * m + j] = seed * p * (wr[j] - dot);
        }
    }
    return (float)total;
}

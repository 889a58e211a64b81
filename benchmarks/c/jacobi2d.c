/* Hand-written reference for benchmarks/roofline.py: examples/jacobi2d.mlir over an
 * n x n float64 grid and `steps` time steps (B = copy of A; each step updates B's
 * interior from A with the five-point stencil 0.2 * (c + w + e + s + n), then A's
 * interior from B; returns sum(A)), and its value and gradient with respect to A.
 *
 * The gradient is reverse mode written by hand: the steps are linear, so the
 * backward sweep needs none of the forward's values. Walking the steps backwards,
 * an update `dst interior = 0.2 * stencil(src)` sends 0.2 times the adjoint of
 * each interior point of dst to the five points it read (`spread`, written as a
 * gather so that rows run in parallel), and the interior of dst's adjoint is then
 * zero (those values were overwritten). Rows are split over an OpenMP loop.
 * Compiled with gcc -O3 -march=native -ffast-math -fopenmp. */
#include <stdlib.h>
#include <string.h>

static void sweep(const double *src, double *dst, long n) {
#pragma omp parallel for schedule(static)
    for (long i = 1; i < n - 1; i++) {
        const double *r = src + i * n;
        double *o = dst + i * n;
        for (long j = 1; j < n - 1; j++)
            o[j] = 0.2 * (r[j] + r[j - 1] + r[j + 1] + r[j + n] + r[j - n]);
    }
}

static double forward(double *a, double *b, long n, long steps) {
    memcpy(b, a, (size_t)(n * n) * sizeof(double));
    for (long t = 0; t < steps; t++) {
        sweep(a, b, n);
        sweep(b, a, n);
    }
    double total = 0.0;
#pragma omp parallel for reduction(+ : total) schedule(static)
    for (long k = 0; k < n * n; k++) total += a[k];
    return total;
}

double jacobi2d(const double *a0, long n, long steps) {
    double *a = malloc((size_t)(n * n) * sizeof(double)), *b = malloc((size_t)(n * n) * sizeof(double));
    memcpy(a, a0, (size_t)(n * n) * sizeof(double));
    double total = forward(a, b, n, steps);
    free(a);
    free(b);
    return total;
}

static int interior(long k, long n) { return k >= 1 && k <= n - 2; }

/* One point of `spread` with every neighbour checked (the grid's outer two rings). */
static double spread_edge(const double *r, long i, long j, long n) {
    double s = 0.0;
    if (interior(i, n) && interior(j, n)) s += r[j];
    if (interior(i, n) && interior(j - 1, n)) s += r[j - 1];
    if (interior(i, n) && interior(j + 1, n)) s += r[j + 1];
    if (interior(i + 1, n) && interior(j, n)) s += r[j + n];
    if (interior(i - 1, n) && interior(j, n)) s += r[j - n];
    return 0.2 * s;
}

/* dst[p] += 0.2 * (the adjoint at each interior point q of g whose stencil reads p),
 * then g's interior is zero. Away from the edges every neighbour is interior. */
static void spread(double *g, double *dst, long n) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        double *o = dst + i * n;
        const double *r = g + i * n;
        if (i >= 2 && i <= n - 3) {
            for (long j = 2; j < n - 2; j++)
                o[j] += 0.2 * (r[j] + r[j - 1] + r[j + 1] + r[j + n] + r[j - n]);
            const long edges[4] = {0, 1, n - 2, n - 1};
            for (int k = 0; k < 4; k++) o[edges[k]] += spread_edge(r, i, edges[k], n);
        } else {
            for (long j = 0; j < n; j++) o[j] += spread_edge(r, i, j, n);
        }
    }
#pragma omp parallel for schedule(static)
    for (long i = 1; i < n - 1; i++) memset(g + i * n + 1, 0, (size_t)(n - 2) * sizeof(double));
}

double jacobi2d_grad(const double *a0, long n, long steps, double seed, double *da) {
    double *a = malloc((size_t)(n * n) * sizeof(double)), *b = malloc((size_t)(n * n) * sizeof(double));
    memcpy(a, a0, (size_t)(n * n) * sizeof(double));
    double total = forward(a, b, n, steps);
    double *db = b;  /* B's adjoint, in B's buffer */
#pragma omp parallel for schedule(static)
    for (long k = 0; k < n * n; k++) {
        da[k] = seed;
        db[k] = 0.0;
    }
    for (long t = 0; t < steps; t++) {
        spread(da, db, n);  /* A's interior came from B */
        spread(db, da, n);  /* B's interior came from A */
    }
#pragma omp parallel for schedule(static)
    for (long k = 0; k < n * n; k++) da[k] += db[k];  /* B started as a copy of A */
    free(a);
    free(b);
    return total;
}

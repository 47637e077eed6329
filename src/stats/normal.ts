/**
 * The standard normal distribution's tail and quantile, for the report's post-hoc intervals and
 * p-values (clustered.ts, mcnemar-clustered.ts). Pure arithmetic, no dependency.
 *
 * - erfc: the Chebyshev fit of Numerical Recipes (Press et al., 2nd ed., §6.2 `erfcc`), fractional
 *   error below 1.2e-7 everywhere: enough for a p-value shown to 2–3 significant digits.
 * - normalQuantile: P. J. Acklam's rational approximation (2003; relative error below 1.15e-9 on
 *   (0, 1)), the usual choice for z at a confidence level.
 */

/** The complementary error function erfc(x) = 1 − erf(x). */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const poly =
    -z * z -
    1.26551223 +
    t *
      (1.00002368 +
        t *
          (0.37409196 +
            t *
              (0.09678418 +
                t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const r = t * Math.exp(poly);
  return x >= 0 ? r : 2 - r;
}

/** P(Z > z) for a standard normal Z. */
export function normalUpperTail(z: number): number {
  return 0.5 * erfc(z / Math.SQRT2);
}

/** P(X > x) for X chi-square with one degree of freedom (X = Z²). */
export function chiSquare1UpperTail(x: number): number {
  if (!(x > 0)) return 1;
  return erfc(Math.sqrt(x / 2));
}

const A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
const C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
const P_LOW = 0.02425;

/** The tail of Acklam's approximation: the quantile of p < P_LOW. */
function lowerTail(p: number): number {
  const q = Math.sqrt(-2 * Math.log(p));
  return (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
}

/** The z with P(Z ≤ z) = p, for p in (0, 1). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normal quantile: probability ${p} is not in (0, 1)`);
  if (p < P_LOW) return lowerTail(p);
  if (p > 1 - P_LOW) return -lowerTail(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q) /
    (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1)
  );
}

/** The two-sided z for a confidence level (0.95 → 1.96). */
export function twoSidedZ(confidence: number): number {
  return normalQuantile(1 - (1 - confidence) / 2);
}

/** The API's spend route (token needed): spend against each budget's limits, today and this month. */
import { Hono } from "hono";
import type { BudgetGuard } from "../../budgets/budget-guard.js";
import { spendReport } from "../../budgets/spend-report.js";

export function spendRoutes(budget: BudgetGuard): Hono {
  const routes = new Hono();
  routes.get("/spend", async (context) => context.json(await spendReport(budget)));
  return routes;
}

import type { RouteDef } from "../define";
import { batchUpdateProducts } from "./batch";
import { createProduct } from "./create";
import { getProductRoute } from "./get";
import { listProducts } from "./list";
import { updateProduct } from "./update";

export const productRoutes: RouteDef[] = [
  listProducts,
  getProductRoute,
  createProduct,
  updateProduct,
  batchUpdateProducts,
];

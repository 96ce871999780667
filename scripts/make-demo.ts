/**
 * Writes fixtures/demo.json: three demo stores, generated deterministically (seeded PRNG,
 * fixed dates) so the file only changes when this script does.
 *
 *   bun scripts/make-demo.ts
 *
 * Records use the API's field names and formats (api-contract.md §7): money as numbers
 * with at most 2 decimals (computed in agorot), date-times in Israel time with offsets.
 * The dates span the October 2026 DST change, so both +03:00 and +02:00 appear.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatIsrael } from "../src/format/time";
import { DEFAULT_ORDER_STATUSES } from "../src/stores/rules";

const OUT = join(import.meta.dir, "..", "fixtures", "demo.json");
const DAY = 86_400_000;
const VAT_RATE = 18; // Israel, since January 2025

/** mulberry32: small, fast and the same on every machine. */
function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
type Random = ReturnType<typeof prng>;

const money = (agorot: number) => agorot / 100;
const at = (ms: number) => formatIsrael(ms);
/** An instant between two dates, at a plausible shop hour (seconds included). */
const between = (r: Random, from: number, to: number) => {
  const firstMidnight = from - ((from + 3 * 3_600_000) % DAY) + DAY; // 00:00 Israel summer time (01:00 in winter), the day after `from`
  const days = Math.max(1, Math.floor((to - firstMidnight) / DAY));
  return (
    firstMidnight +
    Math.floor(r.next() * days) * DAY +
    r.int(7, 21) * 3_600_000 +
    r.int(0, 59) * 60_000 +
    r.int(0, 59) * 1000
  );
};

// ---------- people ----------

const PEOPLE = [
  ["נועה", "כהן", "noa.cohen"],
  ["יוסי", "לוי", "yossi.levi"],
  ["מיכל", "מזרחי", "michal.m"],
  ["דניאל", "פרץ", "daniel.peretz"],
  ["שירה", "ביטון", "shira.biton"],
  ["אורי", "אברהם", "uri.avraham"],
  ["תמר", "פרידמן", "tamar.f"],
  ["איתי", "שפירא", "itay.shapira"],
  ["רוני", "דהן", "roni.dahan"],
  ["הילה", "אזולאי", "hila.azulay"],
  ["עומר", "גולדברג", "omer.goldberg"],
  ["יעל", "רוזנברג", "yael.rosenberg"],
  ["אביגיל", "חדד", "avigail.h"],
  ["נתן", "קליין", "natan.klein"],
  ["מאיה", "אוחיון", "maya.ohayon"],
  ["אלון", "בן דוד", "alon.bendavid"],
  ["ליאור", "גבאי", "lior.gabay"],
  ["עדי", "וייס", "adi.weiss"],
  ["גיל", "שלום", "gil.shalom"],
  ["דנה", "אלון", "dana.alon"],
  ["Sarah", "Goldstein", "sarah.goldstein"],
  ["David", "Miller", "dmiller"],
  ["Rachel", "Stern", "rachel.stern"],
  ["Michael", "Brown", "mike.brown"],
  ["Emma", "Katz", "emma.katz"],
  ["Jonathan", "Adler", "jon.adler"],
  ["Leah", "Fischer", "leah.fischer"],
  ["Ben", "Harris", "ben.harris"],
  ["Hannah", "Levin", "hannah.levin"],
  ["Adam", "Shore", "adam.shore"],
  ["סהר", "עמר", "sahar.amar"],
  ["אריאל", "נחום", "ariel.nachum"],
  ["טל", "יוסף", "tal.yosef"],
  ["ענבר", "סויסה", "inbar.swisa"],
  ["אייל", "ברק", "eyal.barak"],
  ["קרן", "מלכה", "keren.malka"],
  ["Noah", "Weiss", "noah.weiss"],
  ["Olivia", "Green", "olivia.green"],
  ["יונתן", "אשכנזי", "yonatan.ash"],
  ["רותם", "חיים", "rotem.haim"],
  ["Ethan", "Cole", "ethan.cole"],
  ["אלה", "טל", "ella.tal"],
  ["בועז", "רבינוביץ", "boaz.r"],
  ["Mia", "Rosen", "mia.rosen"],
] as const;
const MAIL_DOMAINS = ["example.com", "example.net", "example.org"];
const CITIES = [
  "תל אביב",
  "ירושלים",
  "חיפה",
  "באר שבע",
  "רמת גן",
  "הרצליה",
  "מודיעין",
  "Tel Aviv",
  "Haifa",
  "כפר סבא",
  "רעננה",
  "נתניה",
];
const STREETS = [
  "הרצל",
  "ויצמן",
  "בן יהודה",
  "ז'בוטינסקי",
  "רוטשילד",
  "Dizengoff",
  "Allenby",
  "הנביאים",
  "סוקולוב",
  "אחד העם",
];

const phone = (r: Random) =>
  `05${r.pick(["0", "2", "3", "4", "8"])}-${r.int(200, 999)}-${String(r.int(0, 9999)).padStart(4, "0")}`;
const address = (r: Random) => `${r.pick(STREETS)} ${r.int(1, 120)}, ${r.pick(CITIES)}`;

interface Customer {
  id: number;
  email: string;
  firstName: string;
  lastName: string;
  phone: string | null;
  newsletter: boolean;
  status: "active" | "pending" | "locked";
  notes: string | null;
  registeredAt: string | null;
  lastVisitAt: string | null;
  createdAt: string;
  created: number;
}

function makeCustomers(
  r: Random,
  count: number,
  from: number,
  to: number,
  offset: number,
  withPending: boolean,
): Customer[] {
  const customers: Customer[] = [];
  for (let i = 0; i < count; i++) {
    const [firstName, lastName, handle] = PEOPLE[(i + offset) % PEOPLE.length];
    const created = between(r, from, to);
    const roll = r.next();
    const status = withPending && roll < 0.2 ? "pending" : roll > 0.9 ? "locked" : "active";
    const lastVisit =
      status === "pending" ? null : created + r.int(1, 150) * DAY + r.int(0, 86_399) * 1000;
    customers.push({
      id: i + 1,
      email: `${handle}${i >= PEOPLE.length ? i : ""}@${MAIL_DOMAINS[i % MAIL_DOMAINS.length]}`,
      firstName,
      lastName,
      phone: r.chance(0.7) ? phone(r) : null,
      newsletter: r.chance(0.4),
      status,
      notes:
        status === "locked"
          ? r.pick(["חסום לבקשת הלקוח", "Repeated chargebacks", "Suspected fraud, locked by owner"])
          : r.chance(0.1)
            ? "לקוח VIP"
            : null,
      registeredAt: at(created),
      lastVisitAt: lastVisit === null ? null : at(Math.min(lastVisit, to + 10 * DAY)),
      createdAt: at(created),
      created,
    });
  }
  return customers.sort((a, b) => a.created - b.created).map((c, i) => ({ ...c, id: i + 1 }));
}

// ---------- products ----------

interface ProductSpec {
  name: string;
  base: number; // agorot
  unitName: string | null;
  vatFree?: boolean;
  description: string;
  options?: Array<{ name: string; price: number }>;
}

interface Product {
  id: number;
  name: string;
  sku: string | null;
  internalSku: string | null;
  price: number;
  salePrice: number | null;
  stock: number | null;
  visible: boolean;
  description: string | null;
  vatFree: boolean;
  unitName: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Catalogue {
  products: Product[];
  specs: ProductSpec[];
}

function makeProducts(
  r: Random,
  specs: ProductSpec[],
  prefix: string,
  from: number,
  to: number,
): Catalogue {
  let previousSku: string | null = null;
  const products = specs.map((spec, i): Product => {
    // supplier SKUs repeat across variants now and then (and some products have none); internal SKUs never repeat
    const sku: string | null =
      previousSku && r.chance(0.1) ? previousSku : r.chance(0.9) ? `${prefix}-${100 + i}` : null;
    previousSku = sku;
    const created = between(r, from, from + 60 * DAY);
    const updated = r.chance(0.6) ? between(r, created + DAY, to) : created;
    const onSale = r.chance(0.2);
    const tracked = r.chance(0.7);
    return {
      id: i + 1,
      name: spec.name,
      sku,
      internalSku: `${prefix}${String(i + 1).padStart(4, "0")}`,
      price: money(spec.base),
      salePrice: onSale ? money(Math.round((spec.base * 0.85) / 10) * 10) : null,
      stock: tracked ? (r.chance(0.1) ? 0 : r.int(1, 240)) : null,
      visible: !r.chance(0.08),
      description: spec.description,
      vatFree: spec.vatFree ?? false,
      unitName: spec.unitName,
      createdAt: at(created),
      updatedAt: at(updated),
    };
  });
  return { products, specs };
}

const GRIND = [
  { name: "פולים שלמים", price: 0 },
  { name: "טחינה לאספרסו", price: 0 },
  { name: "טחינה לפילטר", price: 0 },
];
const GIFT_WRAP = { name: "אריזת מתנה", price: 1200 };

const COFFEE_SPECS: ProductSpec[] = [
  ...[
    ["אתיופיה ירגצ'ף", 6400, "פרחוני, ברגמוט ולימון. קלייה בהירה."],
    ["קולומביה סופרמו", 5800, "שוקולד חלב ואגוזים. קלייה בינונית."],
    ["ברזיל סנטוס", 5200, "גוף מלא, קרמל ובוטנים."],
    ["גואטמלה אנטיגואה", 6200, "קקאו ותבלינים, חומציות עדינה."],
    ["קניה AA", 7400, "דומדמניות ואשכולית, חומציות בוהקת."],
    ["Espresso Blend No. 7", 5600, "Our house espresso: dark chocolate, low acidity."],
    ["Decaf Mexico (Swiss Water)", 6000, "Decaffeinated without chemicals; cocoa and almond."],
    ["סומטרה מנדהלינג", 6600, "אדמתי ועשבוני, גוף כבד."],
    ["קוסטה ריקה טראסו", 6800, "דבש ותפוח ירוק."],
    ["תערובת בוקר", 4800, "תערובת עגולה ליום יום."],
    ["Panama Geisha (limited)", 18900, "Jasmine, peach and tea-like body. 100 g tin."],
    ["רואנדה בוריבה", 6900, "פטל ותה שחור."],
  ].map(([name, base, description]) => ({
    name: `${name} 250 גרם` as string,
    base: base as number,
    unitName: "שקית",
    description: description as string,
    options: GRIND,
  })),
  ...[
    ["Earl Grey Supreme", 3900, "Black tea with bergamot and cornflower."],
    ["תה ירוק סנצ'ה", 4200, "תה ירוק יפני, מאודה."],
    ["נענע מרוקאית", 2900, "עלי נענע מיובשים עם תה ירוק גאנפאודר."],
    ["Chamomile Flowers", 3200, "Whole Egyptian chamomile flowers."],
    ["רויבוס וניל", 3400, "נטול קפאין, מתקתק."],
    ["Masala Chai", 3600, "Assam, cardamom, ginger and cinnamon."],
    ["אולונג טייוואני", 5400, "מגולגל, פרחוני וחלבי."],
    ["Jasmine Pearls", 5900, "Hand-rolled green tea scented with jasmine."],
  ].map(([name, base, description]) => ({
    name: name as string,
    base: base as number,
    unitName: "100 גרם",
    description: description as string,
  })),
  ...[
    ["מקינטה 3 כוסות", 11900, "Bialetti Moka Express, אלומיניום."],
    ["French Press 1 L", 14900, "Borosilicate glass, steel frame."],
    ["מטחנה ידנית", 24900, "להבי קרמיקה, 18 דרגות טחינה."],
    ["V60 Dripper", 8900, "Ceramic, size 02."],
    ["פילטרים לV60 (100 יח')", 2900, "נייר לבן ללא כלור."],
    ["Gooseneck Kettle 0.9 L", 19900, "Stainless steel, built-in thermometer."],
    ["משקל קפה דיגיטלי", 12900, "עם טיימר, דיוק 0.1 גרם."],
    ["ספל קרמיקה בעבודת יד", 7900, '350 מ"ל, כל ספל שונה.'],
    ["Travel Tumbler 400 ml", 9900, "Double-walled, leak-proof lid."],
    ["כוסות אספרסו (זוג)", 6900, "זכוכית כפולה."],
    ["Milk Frother", 8900, "Handheld, USB rechargeable."],
    ["קופסת אחסון אטומה", 5900, "שומרת על טריות הפולים."],
  ].map(([name, base, description]) => ({
    name: name as string,
    base: base as number,
    unitName: null,
    description: description as string,
    options: [GIFT_WRAP],
  })),
  ...[
    ["מנוי קפה חודשי", 15900, "שתי שקיות בחודש, נשלח בתחילת החודש.", null],
    ["Coffee Tasting Workshop", 18000, "Two hours in our roastery, Friday mornings.", "seat"],
    ["סדנת לאטה ארט", 22000, "שלוש שעות, כולל חלב ופולים.", "משתתף"],
    ["כרטיס מתנה 100 ₪", 10000, "ניתן למימוש באתר ובחנות.", null],
    ["כרטיס מתנה 250 ₪", 25000, "ניתן למימוש באתר ובחנות.", null],
    ["Cold Brew Concentrate 1 L", 4900, "Ready to dilute 1:2. Keep refrigerated.", "bottle"],
    ["עוגיות אמרטי", 2800, "ארוזות, 200 גרם.", "קופסה"],
    ["Dark Chocolate 70%", 2400, "Single origin Ecuador, 100 g bar.", "bar"],
    ["סירופ וניל", 3900, '750 מ"ל.', "בקבוק"],
    ["Descaling Tablets", 3500, "For espresso machines, 10 tablets.", "pack"],
    ["סט מתנה: קפה וספל", 12900, "שקית קפה לבחירה וספל קרמיקה.", null],
    ["Barista Apron", 11900, "Waxed canvas, leather straps.", null],
    ["אבקת קקאו", 3200, "הולנדית, 250 גרם.", "שקית"],
    ["Oat Milk Barista 1 L", 1600, "Foams like dairy milk.", "carton"],
    ["דריפ בגס (10 יח')", 4500, "קפה פילטר בשקיק אישי.", "קופסה"],
    ["Coffee Cherry Tea (Cascara)", 3800, "Dried coffee cherry husks, 100 g.", "100 g"],
    ["Roaster's Choice Mystery Bag", 5500, "A surprise single origin, roasted this week.", "bag"],
    ["Espresso Machine Cleaning Brush", 2900, "Angled, with spoon.", null],
  ].map(([name, base, description, unitName]) => ({
    name: name as string,
    base: base as number,
    unitName: unitName as string | null,
    description: description as string,
    // gift cards carry no VAT when sold; VAT is charged on what they buy
    vatFree: String(name).includes("כרטיס מתנה"),
  })),
];

const CERAMICS_SPECS: ProductSpec[] = [
  ["Olive Bowl, large", 18900, "Stoneware, olive-green glaze, 28 cm."],
  ["Olive Bowl, small", 8900, "Stoneware, olive-green glaze, 14 cm."],
  ["צלחת הגשה עגולה", 21900, 'קוטר 32 ס"מ, זיגוג לבן מט.'],
  ["Dinner Plate Set (4)", 32900, "Speckled white, dishwasher safe."],
  ["ספל אספרסו אבן", 4900, '90 מ"ל.'],
  ['Mug "Sea of Galilee"', 7900, "Blue reactive glaze, 350 ml."],
  ["אגרטל גבוה", 26900, 'גובה 30 ס"מ, זיגוג טרקוטה.'],
  ["Bud Vase Trio", 15900, "Three small vases in sand, sage and rust."],
  ["קערת פירות", 19900, 'רחבה ונמוכה, 30 ס"מ.'],
  ["Oil Cruet", 9900, "With cork stopper, 300 ml."],
  ["מגש זיתים", 6900, "מגש מוארך עם גומה לגלעינים."],
  ["Planter with Saucer", 14900, "Drainage hole, 18 cm."],
  ["כד מים", 17900, "1.2 ליטר."],
  ["Teapot", 24900, "800 ml, with stainless infuser."],
  ["סט קערות מטבח (3)", 22900, "קערות הכנה מקוננות."],
  ["Butter Dish", 8900, "With lid."],
  ["Wheel-throwing Class (single)", 28000, "Three hours in the studio, clay and firing included."],
  ["קורס קרמיקה 8 מפגשים", 160000, "מפגש שבועי, כולל חומרים ושריפות."],
  ["Gift Voucher 200 NIS", 20000, "Redeemable online and in the studio."],
  ["מנורת שולחן קרמית", 38900, "בסיס קרמי, כבל בד."],
  ["Incense Holder", 3900, "Leaf shape."],
  ["קערת ראמן", 11900, "עם כפית תואמת."],
  ["Seconds Box (mixed)", 9900, "Three pieces with small glaze flaws."],
  ["כוס יין קרמית", 6900, "זוג."],
  ["Spoon Rest", 4500, "Olive-green glaze."],
  ["מאפרה / קערית תכשיטים", 3900, 'קטנה, 10 ס"מ.'],
  ['Large Platter "Negev"', 44900, "Hand-painted, 45 cm."],
  ["סט תה יפני", 34900, "קומקום וארבע כוסות."],
  ["Candle Holder", 5900, "For pillar candles."],
  ["Custom Name Mug", 11900, "Your name painted by hand; made to order, 3 weeks."],
].map(([name, base, description]) => ({
  name: name as string,
  base: base as number,
  unitName: String(name).match(/Class|קורס/) ? "seat" : null,
  description: description as string,
  vatFree: String(name).startsWith("Gift Voucher"),
  options: String(name).startsWith("Custom")
    ? [
        { name: "Name painted", price: 0 },
        { name: "Gold lettering", price: 3000 },
      ]
    : [GIFT_WRAP],
}));

const BOOK_SPECS: ProductSpec[] = [
  ["הספרייה של חצות", 8800, "מאט הייג, תרגום: עידית שורר."],
  ["Sapiens (paperback)", 6900, "Yuval Noah Harari."],
  ["סיפור על אהבה וחושך", 7800, "עמוס עוז."],
  ["The Little Prince", 4900, "Antoine de Saint-Exupéry, illustrated."],
  ["מדריך הטרמפיסט לגלקסיה", 6800, "דאגלס אדמס."],
  ["Bookmark, leather", 2500, "Hand-stitched."],
  ["שקית בד לספרים", 3900, "כותנה אורגנית."],
  ["Reading Light", 5900, "Clip-on, rechargeable."],
  ["כרטיס מתנה 150 ₪", 15000, "לחנות ולאתר."],
  ["Used Books Bundle (5)", 10000, "Five good-condition paperbacks, our pick."],
].map(([name, base, description]) => ({
  name: name as string,
  base: base as number,
  unitName: null,
  description: description as string,
  vatFree: String(name).includes("כרטיס מתנה"),
}));

// ---------- orders ----------

interface OrderPlan {
  statuses: Array<{ id: number; name: string }>;
  /** status ids by meaning, for this store */
  s: {
    new: number;
    awaiting: number;
    processing: number;
    shipped: number;
    delivered: number;
    cancelled: number;
  };
  prefix: string;
  invoiceHost: string;
  coupons: Array<{ code: string; description: string; percent?: number; fixed?: number }>;
  promotions: Array<{ name: string; percent: number; onProduct: boolean }>;
  deliveries: Array<{ name: string; price: number; minTotal?: number }>;
  fields: Array<[string, string[]]>;
}

const PAY_TYPES = [
  "credit_card",
  "credit_card",
  "credit_card",
  "credit_card",
  "paypal",
  "bit",
  "bit",
  "bank_transfer",
  "cash",
  "other",
];

function makeOrders(
  r: Random,
  count: number,
  plan: OrderPlan,
  catalogue: Catalogue,
  customers: Customer[],
  from: number,
  to: number,
) {
  const visible = catalogue.products.filter((p) => p.visible);
  const specOf = (p: Product) => catalogue.specs[p.id - 1];
  const times = Array.from({ length: count }, () => between(r, from, to)).sort((a, b) => a - b);
  return times.map((created, i) => {
    const age = (to - created) / DAY;
    // older orders have moved further along
    let status: number;
    if (r.chance(0.06)) status = plan.s.cancelled;
    else if (age > 20) status = r.chance(0.85) ? plan.s.delivered : plan.s.shipped;
    else if (age > 7)
      status = r.pick([plan.s.shipped, plan.s.shipped, plan.s.delivered, plan.s.processing]);
    else
      status = r.pick([
        plan.s.new,
        plan.s.awaiting,
        plan.s.processing,
        plan.s.processing,
        plan.s.shipped,
      ]);

    const lines = r.int(1, r.chance(0.3) ? 5 : 2);
    const chosen = new Set<Product>();
    while (chosen.size < lines) chosen.add(r.pick(visible));
    let taxable = 0;
    let free = 0;
    const items = [...chosen].map((product) => {
      const spec = specOf(product);
      const quantity = r.chance(0.75) ? 1 : r.int(2, 4);
      const price = Math.round((product.salePrice ?? product.price) * 100);
      const options = [];
      if (spec.options && spec.options.length > 0 && r.chance(0.7)) {
        options.push(spec.options === GRIND ? r.pick(GRIND) : r.pick(spec.options));
        if (spec.options === GRIND && r.chance(0.15)) options.push(GIFT_WRAP);
      }
      const optionsPrice = options.reduce((sum, o) => sum + o.price, 0);
      const unitPrice = price + optionsPrice;
      const total = unitPrice * quantity;
      if (product.vatFree) free += total;
      else taxable += total;
      return {
        name: product.name,
        sku: product.sku ?? product.internalSku ?? "",
        productId: product.id,
        quantity,
        price: money(price),
        optionsPrice: money(optionsPrice),
        unitPrice: money(unitPrice),
        total: money(total),
        unitName: product.unitName,
        vatFree: product.vatFree,
        options: options.map((o) => ({ name: o.name, price: money(o.price) })),
      };
    });

    const promotions = [];
    if (r.chance(0.2)) {
      const promo = r.pick(plan.promotions);
      const target = items.find((item) => !item.vatFree) ?? items[0];
      const base = promo.onProduct ? Math.round(target.total * 100) : taxable;
      const amount = -Math.round((base * promo.percent) / 100);
      if (amount < 0 && !target.vatFree) {
        promotions.push({
          name: promo.name,
          amount: money(amount),
          productId: promo.onProduct ? target.productId : null,
        });
        taxable += amount;
      }
    }
    let coupon = null;
    if (r.chance(0.25)) {
      const c = r.pick(plan.coupons);
      const amount = -Math.min(taxable, c.fixed ?? Math.round((taxable * (c.percent ?? 0)) / 100));
      coupon = { code: c.code, description: c.description, amount: money(amount) };
      taxable += amount;
    }
    const delivery = r.pick(
      plan.deliveries.filter((option) => taxable + free >= (option.minTotal ?? 0)),
    );
    taxable += delivery.price;
    const total = taxable + free;
    const vat = Math.round((taxable * VAT_RATE) / (100 + VAT_RATE));

    const registered = r.chance(0.6)
      ? r.pick(customers.filter((c) => c.created < created && c.status !== "pending"))
      : undefined;
    const [gFirst, gLast, gHandle] = r.pick(PEOPLE);
    // phone orders taken by the shop often have no email
    const email = registered
      ? registered.email
      : r.chance(0.12)
        ? ""
        : `${gHandle}@${r.pick(MAIL_DOMAINS)}`;
    const customer = {
      id: registered ? registered.id : null,
      name: registered ? `${registered.firstName} ${registered.lastName}` : `${gFirst} ${gLast}`,
      email,
      phone: registered?.phone ?? phone(r),
      address: delivery.price === 0 ? "" : address(r),
    };

    const payType = r.pick(PAY_TYPES);
    const paid =
      status === plan.s.awaiting
        ? false
        : status === plan.s.new
          ? payType !== "bank_transfer" && r.chance(0.6)
          : status !== plan.s.cancelled || r.chance(0.3);
    const shippedish = status === plan.s.shipped || status === plan.s.delivered;
    const updated =
      status === plan.s.new
        ? null
        : created +
          Math.floor(
            Math.min(r.int(1, 10) * DAY + r.int(0, 40_000) * 1000, (to - created) * r.next()) /
              1000,
          ) *
            1000;
    const number = 1001 + i;
    const fields = plan.fields
      .filter(() => r.chance(0.1))
      .map(([name, values]) => ({ name, value: r.pick(values) }));
    return {
      id: i + 1,
      number,
      status,
      paid,
      total: money(total),
      vat: money(vat),
      payType,
      payments:
        payType === "credit_card" ? (total > 30000 && r.chance(0.5) ? r.int(2, 6) : 1) : null,
      paypalFee: payType === "paypal" ? money(Math.round(total * 0.034) + 120) : null,
      trackingNumber:
        shippedish && delivery.price > 0 ? `RR${String(r.int(100_000_000, 999_999_999))}IL` : null,
      adminNotes: r.chance(0.1)
        ? r.pick([
            "הלקוח ביקש משלוח אחרי 17:00",
            "Called to confirm the address",
            "לבדוק מלאי לפני אריזה",
            "Repeat customer, add a sample",
          ])
        : null,
      customerNotes: r.chance(0.2)
        ? r.pick([
            "נא להשאיר ליד הדלת",
            "Please call before delivery",
            "זה מתנה, בלי חשבונית בחבילה",
            "קומה 3, אין מעלית",
          ])
        : "",
      newsletter: r.chance(0.3),
      createdAt: at(created),
      updatedAt: updated === null ? null : at(updated),
      customer,
      delivery: { name: delivery.name, price: money(delivery.price) },
      coupon,
      fields,
      invoice: paid
        ? {
            number: 20000 + number,
            url: `https://${plan.invoiceHost}/invoices/${20000 + number}.pdf`,
          }
        : null,
      items,
      promotions,
    };
  });
}

// ---------- leads ----------

const LEAD_MESSAGES = [
  'מעוניין בהצעת מחיר לקפה למשרד, כ-5 ק"ג בחודש',
  "Do you ship to Eilat?",
  "אפשר לתאם סדנה פרטית לקבוצה של 10?",
  "I'd like to stock your products in my café in Haifa.",
  "מתי יחזור למלאי?",
  "Is the gift card valid in the physical store?",
  "רציתי לברר לגבי הזמנה לאירוע",
  null,
];
const LEAD_SOURCES = [
  "contact_form",
  "contact_form",
  "wholesale_form",
  "newsletter_popup",
  "whatsapp",
  null,
];

function makeLeads(r: Random, count: number, from: number, to: number, offset: number) {
  const times = Array.from({ length: count }, () => between(r, from, to)).sort((a, b) => a - b);
  return times.map((created, i) => {
    const [first, last, handle] = PEOPLE[(i * 7 + offset) % PEOPLE.length];
    const withEmail = r.chance(0.8);
    const handled = (to - created) / DAY > 10 ? r.chance(0.8) : r.chance(0.2);
    return {
      id: i + 1,
      name: `${first} ${last}`,
      email: withEmail ? `${handle}@${r.pick(MAIL_DOMAINS)}` : null,
      phone: !withEmail || r.chance(0.5) ? phone(r) : null,
      message: r.pick(LEAD_MESSAGES),
      source: r.pick(LEAD_SOURCES),
      handled,
      notes:
        handled && r.chance(0.5)
          ? r.pick([
              "נשלחה הצעת מחיר",
              "Replied by email",
              "חזרתי בטלפון, לא רלוונטי",
              "Added to wholesale list",
            ])
          : null,
      createdAt: at(created),
    };
  });
}

// ---------- stores ----------

const d = (iso: string) => Date.parse(iso);
const FROM = d("2026-05-01T00:00:00+03:00");
const TO = d("2026-11-15T00:00:00+02:00");
const stripped = (customers: Customer[]) => customers.map(({ created: _created, ...c }) => c);

function beansStore() {
  const r = prng(20261);
  const customers = makeCustomers(r, 40, d("2026-01-05T00:00:00+02:00"), TO - 20 * DAY, 0, true);
  const catalogue = makeProducts(r, COFFEE_SPECS, "BL", d("2026-01-01T00:00:00+02:00"), TO);
  const plan: OrderPlan = {
    statuses: DEFAULT_ORDER_STATUSES,
    s: { new: 1, awaiting: 2, processing: 3, shipped: 4, delivered: 5, cancelled: 6 },
    prefix: "BL",
    invoiceHost: "shop1.example.com",
    coupons: [
      { code: "WELCOME10", description: "10% הנחה על הזמנה ראשונה", percent: 10 },
      { code: "SUMMER26", description: "Summer sale: 15% off", percent: 15 },
      { code: "FREESHIP", description: "החזר דמי משלוח", fixed: 2500 },
    ],
    promotions: [
      { name: "1+1 על תה", percent: 50, onProduct: true },
      { name: "Weekend roast: 10% off", percent: 10, onProduct: false },
    ],
    deliveries: [
      { name: "דואר רשום", price: 2500 },
      { name: "שליח עד הבית", price: 3500 },
      { name: "איסוף עצמי מבית הקלייה", price: 0 },
      { name: "Free delivery over 300 NIS", price: 0, minTotal: 30000 },
    ],
    fields: [
      ["הקדשה לכרטיס ברכה", ["מזל טוב!", "Happy birthday, love you", "תודה על הכל"]],
      ["קומה", ["1", "3", "7"]],
      ["Preferred delivery time", ["Morning", "Afternoon", "Evening"]],
    ],
  };
  return {
    slug: "shop1",
    name: "Beans & Leaves — בית קלייה",
    domain: "shop1.example.com",
    plan: "growth",
    ownerEmail: "owner@shop1.example.com",
    settings: { manualCustomerApproval: true, notifyStatusChange: true, registration: true },
    orderStatuses: DEFAULT_ORDER_STATUSES,
    keys: [
      {
        name: "demo",
        secret: "svc_sk_demoShop1AllAccess000000000000000001",
        permissions: { orders: "write", customers: "write", products: "write", leads: "write" },
      },
      {
        name: "reports (read-only)",
        secret: "svc_sk_demoShop1ReadOnly0000000000000000004",
        permissions: { orders: "read", customers: "read", products: "read", leads: "read" },
      },
    ],
    customers: stripped(customers),
    products: catalogue.products,
    orders: makeOrders(r, 200, plan, catalogue, customers, FROM, TO),
    leads: makeLeads(r, 25, FROM, TO, 0),
  };
}

function ceramicsStore() {
  const r = prng(20262);
  const statuses = [
    { id: 1, name: "New" },
    { id: 2, name: "Awaiting payment" },
    { id: 3, name: "In the kiln" },
    { id: 4, name: "Ready for pickup" },
    { id: 5, name: "Shipped" },
    { id: 6, name: "Delivered" },
    { id: 7, name: "Cancelled" },
    { id: 8, name: "Refunded" },
  ];
  const customers = makeCustomers(r, 25, d("2026-02-01T00:00:00+02:00"), TO - 20 * DAY, 17, false);
  const catalogue = makeProducts(r, CERAMICS_SPECS, "OT", d("2026-02-01T00:00:00+02:00"), TO);
  const plan: OrderPlan = {
    statuses,
    s: { new: 1, awaiting: 2, processing: 3, shipped: 5, delivered: 6, cancelled: 7 },
    prefix: "OT",
    invoiceHost: "shop2.example.com",
    coupons: [
      { code: "STUDIO50", description: "50 NIS off for class students", fixed: 5000 },
      { code: "חג20", description: "20% הנחת חג", percent: 20 },
    ],
    promotions: [{ name: "Seconds week: 15% off", percent: 15, onProduct: true }],
    deliveries: [
      { name: "Courier (fragile handling)", price: 4500 },
      { name: "Pickup from the studio, Jaffa", price: 0 },
    ],
    fields: [
      ["Name to paint", ["Noa", "אורי", "Sarah & Ben"]],
      ["Glaze colour", ["Olive", "Sand", "Rust"]],
    ],
  };
  return {
    slug: "shop2",
    name: "Olive Tree Ceramics",
    domain: "shop2.example.com",
    plan: "pro",
    ownerEmail: "owner@shop2.example.com",
    settings: { manualCustomerApproval: false, notifyStatusChange: true, registration: true },
    orderStatuses: statuses,
    keys: [
      {
        name: "demo",
        secret: "svc_sk_demoShop2ReadOnly0000000000000000002",
        permissions: { orders: "read", products: "read" },
      },
    ],
    customers: stripped(customers),
    products: catalogue.products,
    orders: makeOrders(r, 80, plan, catalogue, customers, FROM, TO),
    leads: makeLeads(r, 12, FROM, TO, 5),
  };
}

function bookStore() {
  const r = prng(20263);
  const statuses = [
    { id: 1, name: "חדשה" },
    { id: 2, name: "ממתינה לתשלום" },
    { id: 3, name: "נשלחה" },
    { id: 4, name: "בוטלה" },
  ];
  const customers = makeCustomers(r, 8, d("2026-03-01T00:00:00+02:00"), TO - 20 * DAY, 30, false);
  const catalogue = makeProducts(r, BOOK_SPECS, "BK", d("2026-03-01T00:00:00+02:00"), TO);
  const plan: OrderPlan = {
    statuses,
    s: { new: 1, awaiting: 2, processing: 1, shipped: 3, delivered: 3, cancelled: 4 },
    prefix: "BK",
    invoiceHost: "free.example.com",
    coupons: [{ code: "READ15", description: "15% הנחה", percent: 15 }],
    promotions: [{ name: "3 ב-100", percent: 20, onProduct: false }],
    deliveries: [
      { name: "דואר רשום", price: 1900 },
      { name: "איסוף מהחנות", price: 0 },
    ],
    fields: [["הקדשה", ["לאמא באהבה", "ליום הולדת 40"]]],
  };
  return {
    slug: "free-shop",
    name: "חנות הספרים הקטנה",
    domain: "free.example.com",
    plan: "free",
    ownerEmail: "owner@free.example.com",
    settings: { manualCustomerApproval: false, notifyStatusChange: false, registration: true },
    orderStatuses: statuses,
    keys: [
      {
        name: "demo",
        secret: "svc_sk_demoFreeShop00000000000000000000003",
        permissions: { products: "read" },
      },
    ],
    customers: stripped(customers),
    products: catalogue.products,
    orders: makeOrders(r, 15, plan, catalogue, customers, FROM, TO),
    leads: makeLeads(r, 4, FROM, TO, 11),
  };
}

/** One record per line: readable diffs, a file that is still easy to scan. */
function serialise(stores: Array<Record<string, unknown>>): string {
  const storeText = stores.map((store) => {
    const fields = Object.entries(store).map(([name, value]) => {
      if (Array.isArray(value) && value.length > 0) {
        return `      ${JSON.stringify(name)}: [\n${value.map((v) => `        ${JSON.stringify(v)}`).join(",\n")}\n      ]`;
      }
      return `      ${JSON.stringify(name)}: ${JSON.stringify(value)}`;
    });
    return `    {\n${fields.join(",\n")}\n    }`;
  });
  return `{\n  "stores": [\n${storeText.join(",\n")}\n  ]\n}\n`;
}

/** The demo stores and the exact text of fixtures/demo.json. */
export function renderDemo() {
  const stores = [beansStore(), ceramicsStore(), bookStore()];
  return { stores, text: serialise(stores) };
}

if (import.meta.main) {
  const { stores, text } = renderDemo();
  writeFileSync(OUT, text);
  const counts = stores.map(
    (s) =>
      `${s.slug}: ${s.products.length} products, ${s.orders.length} orders, ${s.customers.length} customers, ${s.leads.length} leads`,
  );
  console.log(`wrote fixtures/demo.json (${counts.join("; ")})`);
}

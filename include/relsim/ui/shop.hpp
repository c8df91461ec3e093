#pragma once
// The BugHunt shop (docs/bughunt.md): a synthetic application for testing
// agents, served by relsim's HTTP server (UiConfig::site = Site::shop,
// `relsim bughunt serve`). Its page (examples/bughunt/shop.html and
// shop.js, compiled in) fetches the cart from GET /api/cart and computes the
// total itself; with ?v=buggy it forgets the quantity.
//
//   GET /           the page
//   GET /shop.js    its script
//   GET /api/cart   {"items": [{"name", "price", "quantity"}, ...], "currency": "USD"}
#include <span>
#include <string>
#include <string_view>

namespace relsim::ui {

struct CartItem {
  std::string_view name;
  double price = 0.0;
  int quantity = 0;
};

// The cart the shop ships; its total is 487.00, and 288.00 without the
// quantities (what the buggy version shows).
std::span<const CartItem> shop_cart();
std::string cart_json();

std::string_view shop_html();  // examples/bughunt/shop.html
std::string_view shop_js();    // examples/bughunt/shop.js

}  // namespace relsim::ui
